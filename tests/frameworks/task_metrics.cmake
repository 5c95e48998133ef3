# ShardLens's segmentation, token and multilabel metrics (core/report/task_metrics.h) against
# torchmetrics' own compute() over the same counts (task_metrics_oracle.py): the probe prints
# ShardLens's values of the cases the script draws.
add_executable(task_metrics_probe ${CMAKE_CURRENT_LIST_DIR}/task_metrics_probe.cpp)
target_link_libraries(task_metrics_probe PRIVATE shardlens_core)
add_test(NAME frameworks.task_metrics_oracle
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/task_metrics_oracle.py
          $<TARGET_FILE:task_metrics_probe>)
set_tests_properties(frameworks.task_metrics_oracle PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  LABELS frameworks)
# The per-rank-mean mistake as a real Lightning DDP Trainer (3 CPU ranks) logs it with
# sync_dist=True, against the task metrics of its import.
add_test(NAME frameworks.task_metrics_lightning
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/task_metrics_lightning.py
          $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.task_metrics_lightning PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT 300 LABELS "frameworks;multi-process")
