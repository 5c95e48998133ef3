# ShardLensCallback("runs/") on an unchanged LightningModule (issue 23): real 4-rank
# Lightning Trainers (gloo) with torchmetrics metrics and a TensorBoardLogger; ~1 min.
add_test(NAME frameworks.recorder_metrics
  COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/recorder_metrics.py $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.recorder_metrics PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT 600 LABELS "frameworks;multi-process")
# watch(accelerator, "runs/") around gather_for_metrics: 4 real Accelerate processes (gloo),
# even_batches padding flagged, the gathered matrix recorded as reported; ~40 s.
add_test(NAME frameworks.recorder_accelerate
  COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/recorder_accelerate.py $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.recorder_accelerate PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT 300 LABELS "frameworks;multi-process")
# The README's Lightning and Accelerate examples, verbatim, run from a pip --target install
# of integrations/python (its version = project VERSION); ~1.5 min.
add_test(NAME frameworks.recorder_examples
  COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/recorder_examples.py $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.recorder_examples PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT 600 LABELS "frameworks;multi-process")
