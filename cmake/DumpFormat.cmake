# The dump format's C++ side, generated from the one description of it,
# integrations/python/shardlens_recorder/dump_format.json (the recorder's writer reads the same
# file; it lives in the Python package so that pip and the .deb carry it). Generated here, at
# configure time, into generated/shardlens/dump_format.h rather than embedded and parsed at run
# time: the settings keys become members of RecordedSettings and the array names constants, so
# a key the schema drops or renames is a compile error where C++ reads it, not a value that is
# silently never found. CMake's own JSON reader needs no other tool; editing the file
# re-runs the configure step.
set(SHARDLENS_DUMP_FORMAT_JSON
    ${PROJECT_SOURCE_DIR}/integrations/python/shardlens_recorder/dump_format.json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${SHARDLENS_DUMP_FORMAT_JSON})
file(READ ${SHARDLENS_DUMP_FORMAT_JSON} _schema)

string(JSON _name GET "${_schema}" format)
string(JSON _version GET "${_schema}" format_version)

# The indices 0 .. n-1 of the schema's list at the JSON path given (empty for an empty list).
function(_schema_indices out)
  string(JSON count LENGTH "${_schema}" ${ARGN})
  set(indices "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      list(APPEND indices ${i})
    endforeach()
  endif()
  set(${out} "${indices}" PARENT_SCOPE)
endfunction()

# The C++ enumerator the schema's word names (table: a list of word=Enumerator), or an error.
function(_schema_enumerator out table word what)
  string(REPLACE " " "_" key "${word}")
  foreach(pair IN LISTS table)
    if(pair MATCHES "^${key}=(.*)$")
      set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${SHARDLENS_DUMP_FORMAT_JSON}: ${what} has the unknown '${word}'")
endfunction()

# Flag bits: kFlag<Name> = value (PADDING: kFlagPadding, PAD_ROW: kFlagPadRow).
set(_flags "")
_schema_indices(_indices flag_bits)
foreach(i IN LISTS _indices)
  string(JSON _flag GET "${_schema}" flag_bits ${i} name)
  string(JSON _value GET "${_schema}" flag_bits ${i} value)
  string(REPLACE "_" ";" _words "${_flag}")
  set(_name "")
  foreach(_word IN LISTS _words)
    string(SUBSTRING "${_word}" 0 1 _initial)
    string(SUBSTRING "${_word}" 1 -1 _rest)
    string(TOLOWER "${_rest}" _rest)
    string(APPEND _name "${_initial}${_rest}")
  endforeach()
  string(APPEND _flags "inline constexpr int kFlag${_name} = ${_value};\n")
endforeach()

# Arrays: {name, {name, aliases...}, shape}.
set(_shapes scalar=Scalar records=Records records_or_scores=RecordsOrScores
    scalar_or_records=ScalarOrRecords matrix=Matrix sparse=Sparse bytes=Bytes
    cells=Cells)
set(_arrays "")
_schema_indices(_indices arrays)
foreach(i IN LISTS _indices)
  string(JSON _array GET "${_schema}" arrays ${i} name)
  string(JSON _shape GET "${_schema}" arrays ${i} shape)
  _schema_enumerator(_enum "${_shapes}" "${_shape}" "array '${_array}'")
  set(_names "\"${_array}\"")
  _schema_indices(_alias_indices arrays ${i} aliases)
  foreach(k IN LISTS _alias_indices)
    string(JSON _alias GET "${_schema}" arrays ${i} aliases ${k})
    string(APPEND _names ", \"${_alias}\"")
  endforeach()
  string(APPEND _arrays "      {\"${_array}\", {${_names}}, ArrayShape::${_enum}},\n")
endforeach()

# Settings: X(key, kind, minimum).
set(_kinds string=Text bool=Bool int=Integer versions=Versions)
set(_settings "")
_schema_indices(_indices settings)
foreach(i IN LISTS _indices)
  string(JSON _key GET "${_schema}" settings ${i} key)
  string(JSON _type GET "${_schema}" settings ${i} type)
  _schema_enumerator(_kind "${_kinds}" "${_type}" "setting '${_key}'")
  string(JSON _minimum ERROR_VARIABLE _no_minimum GET "${_schema}" settings ${i} minimum)
  if(_no_minimum)
    set(_minimum kNoMinimum)
  endif()
  string(APPEND _settings " \\\n  X(${_key}, ${_kind}, ${_minimum})")
endforeach()

configure_file(${CMAKE_CURRENT_LIST_DIR}/dump_format.h.in
               ${CMAKE_BINARY_DIR}/generated/shardlens/dump_format.h @ONLY)
