# `simulate --like RUN` with no other flag on runs recorded from real Lightning, Accelerate
# and plain torch processes (like_as_typed.py).
add_test(NAME frameworks.like_as_typed
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/like_as_typed.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.like_as_typed PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
