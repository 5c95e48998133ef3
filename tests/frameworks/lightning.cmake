# Lightning 2.6 oracles: real Trainers (4 CPU ranks over gloo) and torchmetrics' own states
# against simulate and ShardLensCallback's dumps (lightning_common.py: the shared parts).
# About 2.5 minutes together on 2 cores; a Trainer costs ~25-45 s (4 imports of Lightning).
foreach(case seed variants wrapper predictions logged)
  add_test(NAME frameworks.lightning_${case}
    COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/lightning_${case}.py
      $<TARGET_FILE:shardlens-cli>)
  set_tests_properties(frameworks.lightning_${case} PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 420 LABELS "frameworks;multi-process")
endforeach()
