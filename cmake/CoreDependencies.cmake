# What core needs (and the LibTorch plugin built on its own, core/torch/standalone, needs to
# link core's exported libraries): header-only / small Debian packages.
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED)
# SHA-256 of run-file members and of the prediction cache's keys (libssl-dev).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# Debian's libzip CMake config requires the zipcmp/zipmerge tools; pkg-config does not.
# Without pkg-config (the GPU bundle of scripts/gpu/bundle.sh on a machine without -dev
# packages), zip.h and libzip are looked up in CMAKE_PREFIX_PATH and the system paths.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(LIBZIP QUIET IMPORTED_TARGET libzip)
endif()
if(TARGET PkgConfig::LIBZIP)
  add_library(libzip::zip ALIAS PkgConfig::LIBZIP)
else()
  find_path(LIBZIP_INCLUDE_DIR zip.h)
  find_library(LIBZIP_LIBRARY zip)
  if(NOT LIBZIP_INCLUDE_DIR OR NOT LIBZIP_LIBRARY)
    message(FATAL_ERROR "libzip not found: install libzip-dev, or put a folder with "
                        "include/zip.h and lib/libzip.so in CMAKE_PREFIX_PATH")
  endif()
  add_library(libzip::zip UNKNOWN IMPORTED)
  set_target_properties(libzip::zip PROPERTIES IMPORTED_LOCATION "${LIBZIP_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LIBZIP_INCLUDE_DIR}")
endif()
find_package(Threads REQUIRED)
