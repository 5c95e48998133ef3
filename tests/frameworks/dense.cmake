# The lessons of many counts a sample (voc-padding-miou, ade20k-batch-limit,
# ade20k-rank-mean-miou, voc-unsynced, conll-plain-gather) measured with torch's
# DistributedSampler, Accelerate's BatchSamplerShard and torchmetrics' confusion-matrix states
# (dense_lessons.py): about 25 s on 2 cores, one process.
add_test(NAME frameworks.dense_lessons
         COMMAND python3 ${SHARDLENS_FRAMEWORK_TESTS}/dense_lessons.py
                 $<TARGET_FILE:shardlens-cli>)
set_tests_properties(frameworks.dense_lessons PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "frameworks" TIMEOUT 300
                     ENVIRONMENT "OMP_NUM_THREADS=1")
