# LibTorch from a Python's torch package (a pip wheel), CPU parts only: the plugin
# (core/torch) needs ATen, TorchScript, pickle and c10d/Gloo, all in libtorch_cpu + libc10.
# find_package(Torch) is not used: a pip wheel is a CUDA build, and its TorchConfig.cmake
# then wants the CUDA toolkit (and links libtorch_cuda) even though nothing here runs on a GPU.
#
# In:  SHARDLENS_TORCH_PYTHON (a python3 that imports torch, e.g. build/venv/bin/python).
# Out: what find_package(Torch) would set for core/torch: Torch_FOUND, Torch_VERSION,
#      TORCH_INCLUDE_DIRS, TORCH_LIBRARIES (the target shardlens_libtorch_cpu), TORCH_CXX_FLAGS.
execute_process(
  COMMAND ${SHARDLENS_TORCH_PYTHON} -c [=[
import os, torch
root = os.path.dirname(torch.__file__)
print(torch.__version__.split("+")[0])
print(os.path.join(root, "include"))
print(os.path.join(root, "lib"))
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
]=]
  OUTPUT_VARIABLE _torch_info OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_VARIABLE _torch_error RESULT_VARIABLE _torch_rc)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "SHARDLENS_TORCH_PYTHON=${SHARDLENS_TORCH_PYTHON} cannot import torch: "
                      "${_torch_error}")
endif()
string(REPLACE "\n" ";" _torch_info "${_torch_info}")
list(GET _torch_info 0 Torch_VERSION)
list(GET _torch_info 1 _torch_include)
list(GET _torch_info 2 _torch_lib)
list(GET _torch_info 3 _torch_cxx11_abi)

# Not find_library: its cached result would outlive a venv replaced by a new pin.
set(_torch_libs ${_torch_lib}/libtorch_cpu.so ${_torch_lib}/libc10.so)
foreach(_lib IN LISTS _torch_libs)
  if(NOT EXISTS ${_lib})
    message(FATAL_ERROR "${_lib} does not exist (torch from ${SHARDLENS_TORCH_PYTHON})")
  endif()
endforeach()
add_library(shardlens_libtorch_cpu INTERFACE IMPORTED GLOBAL)
# -isystem, so the wheel's headers win over Debian's LibTorch 1.13 in /usr/include.
set(TORCH_INCLUDE_DIRS ${_torch_include} ${_torch_include}/torch/csrc/api/include)
set_target_properties(shardlens_libtorch_cpu PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
  INTERFACE_LINK_LIBRARIES "${_torch_libs}"
  # libtorch_cpu finds the CUDA runtime it names (never called here) through its own RPATH
  # in the venv; the plugin finds libtorch_cpu through this one.
  INTERFACE_LINK_OPTIONS "LINKER:-rpath,${_torch_lib};LINKER:-rpath-link,${_torch_lib}")
set(TORCH_LIBRARIES shardlens_libtorch_cpu)
# The wheel's C++ ABI: std::string and std::vector cross the plugin boundary, so a wheel
# built with the old ABI cannot be used by a program built with the new one.
set(TORCH_CXX_FLAGS -D_GLIBCXX_USE_CXX11_ABI=${_torch_cxx11_abi})
if(NOT _torch_cxx11_abi EQUAL 1)
  message(FATAL_ERROR "torch ${Torch_VERSION} from ${SHARDLENS_TORCH_PYTHON} uses the pre-C++11 "
                      "ABI; ShardLens passes std::string across the plugin boundary and needs "
                      "_GLIBCXX_USE_CXX11_ABI=1 (pip wheels use it from torch 2.7 on)")
endif()
set(Torch_FOUND ON)
message(STATUS "LibTorch ${Torch_VERSION} (CPU parts) from ${SHARDLENS_TORCH_PYTHON}: ${_torch_lib}")
