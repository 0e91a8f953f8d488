# Note [One LibTorch]
# dgcn builds against one LibTorch: the torch wheel of the Python environment
# that scripts/install-deps.sh makes (torch==2.11.0 from PyPI, CUDA 13; see
# scripts/requirements.lock). Another LibTorch (a user's own torch, an
# unpacked libtorch zip) is chosen with -DTorch_DIR=<prefix>/share/cmake/Torch
# or -DDGCN_PYTHON=<a python that imports torch>.
#
# PyPI's wheel is a CUDA build. Its TorchConfig.cmake needs a CUDA toolkit and
# fails outright without one, whatever CAFFE2_USE_CUDA says. So:
#   - toolkit found (DGCN_HAVE_CUDA): find_package(Torch), the torch target
#     with torch_cuda, and the torch-facing CUDA glue is compiled;
#   - no toolkit, or DGCN_CUDA=OFF: an imported `torch` target over the
#     wheel's CPU libraries (torch, torch_cpu, c10) made here; the CUDA wheel
#     runs on a CPU, so the same environment serves a CPU-only build.
# The binaries find libtorch*.so through their RPATH into the wheel's
# torch/lib, with nothing in LD_LIBRARY_PATH.
#
# Sets: DGCN_TORCH_VERSION, DGCN_TORCH_PREFIX, DGCN_TORCH_HAS_CUDA,
#       DGCN_HAVE_TORCH_CUDA (the glue is compiled).

if(NOT Torch_DIR)
  if(NOT DGCN_PYTHON)
    message(FATAL_ERROR "dgcn: no LibTorch: no python3 on PATH to ask for torch "
                        "(run scripts/install-deps.sh and `source scripts/env.sh`, or pass "
                        "-DTorch_DIR=<libtorch>/share/cmake/Torch)")
  endif()
  execute_process(
    COMMAND "${DGCN_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE dgcn_torch_cmake_prefix ERROR_VARIABLE dgcn_torch_error
    RESULT_VARIABLE dgcn_torch_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT dgcn_torch_rc EQUAL 0)
    string(REGEX REPLACE ".*\n([^\n]+)\n?$" "\\1" dgcn_torch_error "${dgcn_torch_error}")
    message(FATAL_ERROR "dgcn: no LibTorch: ${DGCN_PYTHON} cannot import torch (${dgcn_torch_error}). "
                        "Run scripts/install-deps.sh and `source scripts/env.sh`, or pass "
                        "-DDGCN_PYTHON=<a python with torch> or -DTorch_DIR=<libtorch>/share/cmake/Torch")
  endif()
  set(Torch_DIR "${dgcn_torch_cmake_prefix}/Torch" CACHE PATH "LibTorch's CMake config folder" FORCE)
endif()
get_filename_component(DGCN_TORCH_PREFIX "${Torch_DIR}/../../.." ABSOLUTE)
if(NOT EXISTS "${DGCN_TORCH_PREFIX}/lib/libtorch_cpu.so")
  message(FATAL_ERROR "dgcn: Torch_DIR=${Torch_DIR} is not a LibTorch's share/cmake/Torch "
                      "(no ${DGCN_TORCH_PREFIX}/lib/libtorch_cpu.so)")
endif()
set(DGCN_TORCH_HAS_CUDA OFF)
if(EXISTS "${DGCN_TORCH_PREFIX}/lib/libtorch_cuda.so")
  set(DGCN_TORCH_HAS_CUDA ON)
endif()

# The version as the wheel names it (2.11.0+cu130), else from the headers.
set(DGCN_TORCH_VERSION "")
if(EXISTS "${DGCN_TORCH_PREFIX}/version.py")
  file(STRINGS "${DGCN_TORCH_PREFIX}/version.py" dgcn_line REGEX "^__version__ = ")
  string(REGEX REPLACE "^__version__ = '([^']+)'.*" "\\1" DGCN_TORCH_VERSION "${dgcn_line}")
endif()
if(NOT DGCN_TORCH_VERSION)
  foreach(part MAJOR MINOR PATCH)
    file(STRINGS "${DGCN_TORCH_PREFIX}/include/torch/headeronly/version.h" dgcn_line
         REGEX "#define TORCH_VERSION_${part} ")
    string(REGEX REPLACE ".* ([0-9]+).*" "\\1" dgcn_torch_${part} "${dgcn_line}")
  endforeach()
  set(DGCN_TORCH_VERSION "${dgcn_torch_MAJOR}.${dgcn_torch_MINOR}.${dgcn_torch_PATCH}")
endif()

# TorchConfig searches Caffe2's config and its libraries on the default paths
# before its own folder: with another LibTorch installed system-wide (Debian's
# libtorch-dev) it would mix the two. Pin them to this prefix.
set(Caffe2_DIR "${Torch_DIR}/../Caffe2" CACHE PATH "" FORCE)
foreach(lib torch c10 c10_cuda)
  string(TOUPPER "${lib}_LIBRARY" dgcn_var)
  if(lib STREQUAL "c10")
    set(dgcn_var c10_LIBRARY)
  endif()
  if(EXISTS "${DGCN_TORCH_PREFIX}/lib/lib${lib}.so")
    set(${dgcn_var} "${DGCN_TORCH_PREFIX}/lib/lib${lib}.so" CACHE FILEPATH "" FORCE)
  endif()
endforeach()

set(DGCN_HAVE_TORCH_CUDA OFF)
if(DGCN_TORCH_HAS_CUDA AND DGCN_HAVE_CUDA)
  # TorchConfig finds the toolkit again (FindCUDA); point it at ours.
  if(NOT CUDA_TOOLKIT_ROOT_DIR)
    get_filename_component(CUDA_TOOLKIT_ROOT_DIR "${CUDAToolkit_BIN_DIR}/.." ABSOLUTE)
  endif()
  # NVTX3 from the toolkit's headers (the wheel ships none).
  set(USE_SYSTEM_NVTX ON CACHE BOOL "")
  # Torch's cuda.cmake turns CMAKE_CUDA_ARCHITECTURES off and puts -gencode
  # flags for TORCH_CUDA_ARCH_LIST (default: every architecture it knows)
  # into CMAKE_CUDA_FLAGS. dgcn's kernels are plain CUDA that need none of
  # its flags: keep ours, and tell it the same architectures.
  set(dgcn_cuda_flags "${CMAKE_CUDA_FLAGS}")
  set(dgcn_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
  if(NOT TORCH_CUDA_ARCH_LIST)
    # CMake's "80-real;90" is torch's "8.0;9.0+PTX".
    set(TORCH_CUDA_ARCH_LIST "")
    foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX REPLACE "^([0-9]+)([0-9]a?).*" "\\1.\\2" dotted "${arch}")
      if(arch MATCHES "-real$")
        list(APPEND TORCH_CUDA_ARCH_LIST "${dotted}")
      else()
        list(APPEND TORCH_CUDA_ARCH_LIST "${dotted}+PTX")
      endif()
    endforeach()
  endif()
  unset(CMAKE_CUDA_ARCHITECTURES)  # else it warns that it ignores them
  unset(CMAKE_CUDA_ARCHITECTURES CACHE)
  find_package(Torch REQUIRED)
  set(CMAKE_CUDA_FLAGS "${dgcn_cuda_flags}")
  set(CMAKE_CUDA_ARCHITECTURES "${dgcn_cuda_archs}" CACHE STRING "The GPUs dgcn's CUDA kernels are compiled for" FORCE)
  set(CMAKE_CUDA_ARCHITECTURES "${dgcn_cuda_archs}")
  set(DGCN_HAVE_TORCH_CUDA ON)
elseif(NOT DGCN_TORCH_HAS_CUDA)
  find_package(Torch REQUIRED)  # a CPU LibTorch: its own config works anywhere
else()
  # A CUDA LibTorch without a CUDA toolkit: its CPU half, by hand. The
  # definitions are those torch_cpu's imported target carries
  # (Caffe2Targets.cmake): c10d's distributed API with the Gloo backend.
  add_library(torch INTERFACE IMPORTED)
  target_include_directories(torch SYSTEM INTERFACE "${DGCN_TORCH_PREFIX}/include"
                                                    "${DGCN_TORCH_PREFIX}/include/torch/csrc/api/include")
  target_compile_definitions(torch INTERFACE USE_DISTRIBUTED USE_C10D_GLOO USE_RPC USE_TENSORPIPE)
  target_link_libraries(torch INTERFACE "${DGCN_TORCH_PREFIX}/lib/libtorch.so"
                                        "${DGCN_TORCH_PREFIX}/lib/libtorch_cpu.so"
                                        "${DGCN_TORCH_PREFIX}/lib/libc10.so")
endif()

# Note [libstdc++ before LibTorch]
# The wheel is built with a newer GCC (gcc-toolset-13) whose libstdc++
# additions are linked into libtorch*.so and exported: std::filesystem,
# std::chrono's time zones, string streams' view(). A binary that lists
# libtorch.so before libstdc++.so.6 binds those calls to the wheel's copies;
# std::filesystem::remove_all(path, error_code&) there crashes (a null call).
# So every binary that links LibTorch names libstdc++ first, and the
# system's library answers for the standard library.
set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_OPTIONS
             "LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")

# Note [One fmt]
# The wheel's include folder carries the fmt 12 that LibTorch was built with;
# Debian's spdlog 1.10 needs Debian's fmt 9, and one translation unit cannot
# hold both. LibTorch keeps its fmt inside its libraries (hidden symbols,
# the fmt::v12 namespace), and the few of its headers that include fmt
# compile with fmt 9 as well. So every dgcn TU uses Debian's fmt: the torch
# targets see a copy of the include folder (links, made here) without fmt/.
set(dgcn_torch_include "${CMAKE_BINARY_DIR}/torch-include")
file(MAKE_DIRECTORY "${dgcn_torch_include}")  # links are replaced, never followed
file(GLOB dgcn_entries RELATIVE "${DGCN_TORCH_PREFIX}/include" "${DGCN_TORCH_PREFIX}/include/*")
foreach(entry ${dgcn_entries})
  if(NOT entry STREQUAL "fmt")
    file(CREATE_LINK "${DGCN_TORCH_PREFIX}/include/${entry}" "${dgcn_torch_include}/${entry}" SYMBOLIC)
  endif()
endforeach()
foreach(target torch torch_cpu torch_cuda c10 c10_cuda)
  if(TARGET ${target})
    get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(dirs)
      string(REPLACE "${DGCN_TORCH_PREFIX}/include" "${dgcn_torch_include}" dirs "${dirs}")
      set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${dirs}")
    endif()
  endif()
endforeach()

# c10d's ProcessGroupGloo.hpp includes gloo's headers, which a torch wheel
# does not ship; Debian's libgloo-dev has them (headers only: the gloo code
# is inside libtorch_cpu). The Gloo tests prove the two agree.
include(CheckIncludeFileCXX)
set(CMAKE_REQUIRED_INCLUDES "${DGCN_TORCH_PREFIX}/include")
check_include_file_cxx(gloo/algorithm.h DGCN_HAVE_GLOO_HEADERS)
unset(CMAKE_REQUIRED_INCLUDES)
if(NOT DGCN_HAVE_GLOO_HEADERS)
  message(FATAL_ERROR "dgcn: gloo's headers (gloo/algorithm.h) were not found; c10d's Gloo backend "
                      "needs them (Debian: apt install libgloo-dev, or run scripts/install-deps.sh)")
endif()

message(STATUS "dgcn: LibTorch ${DGCN_TORCH_VERSION} at ${DGCN_TORCH_PREFIX} "
               "(CUDA build: ${DGCN_TORCH_HAS_CUDA}; torch CUDA glue compiled: ${DGCN_HAVE_TORCH_CUDA})")
