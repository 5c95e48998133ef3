# The venv holds the pinned versions of requirements/frameworks.txt.
add_test(NAME frameworks.venv_versions
  COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/venv_versions.py
    ${PROJECT_SOURCE_DIR}/requirements/frameworks.txt)
set_tests_properties(frameworks.venv_versions PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
  LABELS frameworks)
