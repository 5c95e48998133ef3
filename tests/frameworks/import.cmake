# Dumps from real numpy / torch 2.x with settings_json, several loaders and
# validations, imported as separate evaluations and re-simulated with `simulate --like`.
add_test(NAME frameworks.import_settings
  COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/import_settings.py $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.import_settings PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  LABELS frameworks)
