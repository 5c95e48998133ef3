# Required: header-only / small Debian packages used by core and the CLI.
include(${CMAKE_CURRENT_LIST_DIR}/CoreDependencies.cmake)

set(SHARDLENS_HAS_QT OFF)
if(SHARDLENS_WITH_QT)
  find_package(Qt6 6.2 COMPONENTS Core Gui Widgets Charts Svg SvgWidgets PrintSupport Concurrent Test)
  set_package_properties(Qt6 PROPERTIES TYPE RECOMMENDED PURPOSE "Desktop application (shardlens)")
  if(Qt6_FOUND)
    set(SHARDLENS_HAS_QT ON)
  endif()
endif()
add_feature_info(GUI SHARDLENS_HAS_QT "Qt 6 desktop application and figure export")

# CMake 3.25's FindCUDAToolkit sets a property on CUDA::nvToolsExt even where the toolkit has
# no nvToolsExt (CUDA 13 has only the header-only nvtx3), a configure error in stock Debian 12
# CMake. A stand-in target avoids it; ShardLens uses no NVTX. Before find_package(Torch),
# whose CUDA builds look for the toolkit too.
if(CMAKE_VERSION VERSION_LESS 3.26 AND NOT TARGET CUDA::nvToolsExt)
  add_library(CUDA::nvToolsExt INTERFACE IMPORTED GLOBAL)
endif()

set(SHARDLENS_HAS_TORCH OFF)
# SHARDLENS_TORCH_PYTHON: build core/torch against that python's torch (a pip wheel) instead of
# the LibTorch find_package(Torch) finds (scripts/build/build-torch2-plugin.sh).
set(SHARDLENS_TORCH_PYTHON "" CACHE FILEPATH "A python whose torch (pip) the plugin links")
if(SHARDLENS_WITH_TORCH)
  if(SHARDLENS_TORCH_PYTHON)
    include(${CMAKE_CURRENT_LIST_DIR}/TorchFromPython.cmake)
  else()
    find_package(Torch QUIET)
    set_package_properties(Torch PROPERTIES TYPE OPTIONAL PURPOSE "Real multi-rank runs over Gloo, .pt import")
  endif()
  if(Torch_FOUND)
    set(SHARDLENS_HAS_TORCH ON)
    # ProcessGroupGloo.hpp includes <gloo/...>. A LibTorch that does not ship Gloo's headers
    # (a pip wheel may not) gets SHARDLENS_GLOO_INCLUDE_DIR's (the GPU bundle carries
    # Debian's): core/torch only passes Gloo devices around by pointer.
    find_path(SHARDLENS_TORCH_GLOO_HEADER gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS}
      NO_DEFAULT_PATH)
    if(NOT SHARDLENS_TORCH_GLOO_HEADER AND SHARDLENS_GLOO_INCLUDE_DIR)
      message(STATUS "LibTorch has no Gloo headers: using ${SHARDLENS_GLOO_INCLUDE_DIR}")
      list(APPEND TORCH_INCLUDE_DIRS ${SHARDLENS_GLOO_INCLUDE_DIR})
      if(TARGET torch)
        set_property(TARGET torch APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
          ${SHARDLENS_GLOO_INCLUDE_DIR})
      else()
        set_property(TARGET ${TORCH_LIBRARIES} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
          ${SHARDLENS_GLOO_INCLUDE_DIR})
      endif()
    endif()
  endif()
endif()
add_feature_info(LibTorch SHARDLENS_HAS_TORCH "TorchScript inference, c10d Gloo ranks, .pt reading")

set(SHARDLENS_HAS_CUDA OFF)
if(SHARDLENS_WITH_CUDA)
  # CUDAToolkit finds nvcc on PATH, through CUDAToolkit_ROOT / CUDA_PATH, or in
  # /usr/local/cuda; the CUDA language is then enabled with that compiler.
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CUDAToolkit_FOUND AND CMAKE_CUDA_COMPILER)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
      set(SHARDLENS_HAS_CUDA ON)
    endif()
  endif()
endif()
add_feature_info(CUDA SHARDLENS_HAS_CUDA "CUDA confusion-matrix kernel and NCCL collectives")

if(SHARDLENS_HAS_QT)
  set(SHARDLENS_QT_VERSION ${Qt6_VERSION})
endif()
if(SHARDLENS_HAS_TORCH)
  set(SHARDLENS_TORCH_VERSION ${Torch_VERSION})
endif()
