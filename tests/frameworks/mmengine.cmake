# mmengine 0.10.7 as the oracle of --sampler mmengine-default and --sync collect-results
# (DefaultSampler and collect_results in 2 to 4 gloo processes).
add_test(NAME frameworks.mmengine_collect
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/mmengine_collect.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.mmengine_collect PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks;multi-process" TIMEOUT 300)
