# torch 2.x from the venv (requirements/frameworks.txt) as the oracle of randperm,
# DistributedSampler and the default torch version, and the LibTorch plugin built against it
# (build/torch2). Every test re-executes itself in the venv (frameworks.py).

# ShardLens's order and shards as SHA-256 digests, for the full-size comparison.
add_executable(torch2_digests ${CMAKE_CURRENT_LIST_DIR}/torch2_digests.cpp)
target_link_libraries(torch2_digests PRIVATE shardlens_core OpenSSL::Crypto)

# Random small cases: every rank's shards against the real DistributedSampler.
add_test(NAME frameworks.torch2_sampler COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/torch2_oracle.py
  small $<TARGET_FILE:shardlens-cli> --cases 300)
# The torch parts of scripts/oracles/modern_oracles.py drawn live, read by modern_vector_tests.
add_test(NAME frameworks.modern_torch_live COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/modern_live.py
  $<TARGET_FILE:modern_vector_tests> ${PROJECT_SOURCE_DIR}/scripts/oracles/modern_oracles.py)
# The plugin of scripts/build/build-torch2-plugin.sh (build/torch2): a real run and .pt imports.
add_test(NAME frameworks.torch2_plugin COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/torch2_plugin.py
  $<TARGET_FILE:shardlens-cli> ${PROJECT_SOURCE_DIR}/build/torch2
  ${PROJECT_SOURCE_DIR}/resources/models/fashion_mnist_reference.pt)
set_tests_properties(frameworks.torch2_sampler frameworks.modern_torch_live
  frameworks.torch2_plugin PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS frameworks)

# n = 214,748,363 and 214,748,364 (torch >= 2.7's randperm branch) in full: about 2 minutes
# and 2 GB. Labelled slow (not in every ctest) and torch-full: scripts/test.sh runs it
# once per run with `ctest -L torch-full`.
add_test(NAME frameworks.torch2_full COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/torch2_oracle.py
  full $<TARGET_FILE:torch2_digests>)
set_tests_properties(frameworks.torch2_full PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
  RUN_SERIAL TRUE LABELS "frameworks;slow;torch-full")
