# Accelerate 1.15 as the oracle of --sampler accelerate and its gathers (accelerate_*.py).
add_test(NAME frameworks.accelerate_sampler_grid
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/accelerate_sampler_grid.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.accelerate_sampler_grid PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
add_test(NAME frameworks.accelerate_prepare
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/accelerate_prepare.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.accelerate_prepare PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
add_test(NAME frameworks.accelerate_readme
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/accelerate_readme.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.accelerate_readme PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
add_test(NAME frameworks.accelerate_uneven
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/accelerate_uneven.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.accelerate_uneven PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
add_test(NAME frameworks.accelerate_tokens
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/accelerate_tokens.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.accelerate_tokens PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
add_test(NAME frameworks.accelerate_segmentation
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/accelerate_segmentation.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.accelerate_segmentation PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
