# DGCN_CUDA=AUTO|ON|OFF: find the CUDA toolkit, cuSPARSE and NCCL.
# DGCN_HAVE_CUDA       plain CUDA kernels (cuda/ folders) are compiled
# DGCN_HAVE_TORCH_CUDA torch-facing CUDA glue is compiled as well (needs a CUDA
#                      LibTorch; decided in DgcnTorch.cmake once Torch is found)
# Included before DgcnDependencies: a CUDA LibTorch 2.x's own cmake compares
# the CUDA language's compiler version with the toolkit's, so the language
# must be enabled before find_package(Torch).
# NCCL: in the toolkit's folders, or where NCCL_ROOT (variable or environment)
# points, e.g. the nvidia-nccl wheel a pip torch loads (its lib has only
# libnccl.so.2).
set(DGCN_HAVE_CUDA OFF)
set(DGCN_HAVE_TORCH_CUDA OFF)
set(DGCN_NCCL_VERSION "")
if(NOT DGCN_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cusparse)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT}/include $ENV{NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
                 HINTS ${NCCL_ROOT}/lib $ENV{NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR})
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cusparse
     AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    enable_language(CUDA)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "52")
      # Hopper (H100/H200) is the target; sm_80 keeps Ampere working.
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    set(CMAKE_CUDA_STANDARD 17)
    set(DGCN_HAVE_CUDA ON)
    # NCCL's version, for --version (nccl.h: #define NCCL_MAJOR 2 ...).
    file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" dgcn_nccl_lines REGEX "#define NCCL_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
           DGCN_NCCL_VERSION "${dgcn_nccl_lines}")
    add_library(dgcn_nccl INTERFACE)
    target_include_directories(dgcn_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(dgcn_nccl INTERFACE ${NCCL_LIBRARY})
    message(STATUS "dgcn: CUDA ${CUDAToolkit_VERSION} with cuSPARSE and NCCL ${DGCN_NCCL_VERSION} (${NCCL_LIBRARY})")
  elseif(DGCN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DGCN_CUDA=ON but the CUDA toolkit, cuSPARSE or NCCL was not found "
                        "(nvcc: '${CMAKE_CUDA_COMPILER}', NCCL: '${NCCL_LIBRARY}')")
  else()
    message(STATUS "dgcn: CUDA toolkit not found; CPU-only build")
  endif()
endif()
