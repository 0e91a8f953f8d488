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
# Note [CUDA architectures]
# The default is what docs/building.md names: machine code for Ampere (sm_80)
# and Hopper (sm_90: H100, H200), plus Hopper's PTX, which the driver compiles
# for any newer GPU. It must be set before enable_language(CUDA): left unset,
# enable_language fills in nvcc's own default (sm_75 for CUDA 13), a GPU we
# never name. -DCMAKE_CUDA_ARCHITECTURES=... or $CUDAARCHS choose others.
set(DGCN_DEFAULT_CUDA_ARCHITECTURES "80-real;90")
# dgcn_describe_cuda_archs(OUT "80-real;90") -> "sm_80 sm_90, PTX compute_90":
# what --version prints (base/CMakeLists.txt).
function(dgcn_describe_cuda_archs out archs)
  set(sass "")
  set(ptx "")
  foreach(arch IN LISTS archs)
    string(REGEX MATCH "^[0-9]+a?" number "${arch}")
    if(arch MATCHES "-virtual$")
      list(APPEND ptx "compute_${number}")
    elseif(arch MATCHES "-real$")
      list(APPEND sass "sm_${number}")
    else()
      list(APPEND sass "sm_${number}")
      list(APPEND ptx "compute_${number}")
    endif()
  endforeach()
  string(REPLACE ";" " " text "${sass}")
  if(ptx)
    string(REPLACE ";" " " ptx "${ptx}")
    set(text "${text}, PTX ${ptx}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

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
    # NAMES_PER_DIR: NCCL_ROOT's library (the wheel has only libnccl.so.2)
    # before the toolkit's libnccl.so, so header and library come from one NCCL.
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
                 HINTS ${NCCL_ROOT}/lib $ENV{NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR})
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cusparse
     AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES "${DGCN_DEFAULT_CUDA_ARCHITECTURES}" CACHE STRING
          "The GPUs dgcn's CUDA kernels are compiled for (Note [CUDA architectures])")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(DGCN_HAVE_CUDA ON)
    # NCCL's version, for --version (nccl.h: #define NCCL_MAJOR 2 ...).
    file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" dgcn_nccl_lines REGEX "#define NCCL_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
           DGCN_NCCL_VERSION "${dgcn_nccl_lines}")
    # The binaries find libcudart, libcusparse and NCCL through their RUNPATH:
    # nvcc's library folder is one of CUDA's implicit link folders, which
    # CMake leaves out of RPATHs, and a host need not list it in the loader's
    # cache (scripts/gpu-check.sh's ldd step proves it without one).
    get_filename_component(dgcn_nccl_dir "${NCCL_LIBRARY}" DIRECTORY)
    list(APPEND CMAKE_BUILD_RPATH "${CUDAToolkit_LIBRARY_DIR}" "${dgcn_nccl_dir}")
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
