# Every outside library dgcn uses, found once here: Debian 12 packages and
# LibTorch from the pinned Python environment (scripts/install-deps.sh,
# cmake/DgcnTorch.cmake). On a CUDA host without a package registry,
# scripts/gpu-pack-deps.sh's bundle points CMAKE_PREFIX_PATH at an unpacked
# copy of the same Debian packages.
# The Python of dgcn's environment (scripts/env.sh puts it first on PATH):
# LibTorch is its torch (cmake/DgcnTorch.cmake) and the tests run it.
set(DGCN_PYTHON "" CACHE FILEPATH "The Python whose torch dgcn builds against and whose tests use (default: python3 on PATH)")
if(NOT DGCN_PYTHON AND SKBUILD AND Python_EXECUTABLE)
  # pip install . (scikit-build-core): the Python that builds the package.
  set(DGCN_PYTHON "${Python_EXECUTABLE}" CACHE FILEPATH "" FORCE)
endif()
if(NOT DGCN_PYTHON)
  find_program(DGCN_PYTHON_FOUND NAMES python3 python NO_CACHE)
  set(DGCN_PYTHON "${DGCN_PYTHON_FOUND}" CACHE FILEPATH "" FORCE)
endif()

find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
# Boost.Graph is used header-only: asking for its `graph` component would make
# Debian's boost_graph-config.cmake demand boost_regex of the same exact
# version, which a host with only the headers (the GPU host's bundle) lacks.
find_package(Boost 1.74 REQUIRED)
# zlib by its soname: zlib1g-dev's libz.so is an absolute link to Debian's
# libz.so.1.2.13, which dangles once the package is unpacked elsewhere (the
# GPU host's bundle); libz.so.1 is the runtime every Linux host has.
find_library(ZLIB_LIBRARY NAMES libz.so.1 z)
find_package(ZLIB REQUIRED)

# zstd and xxhash: Debian's zstd CMake config names differ between versions,
# so find the header and library directly.
find_path(ZSTD_INCLUDE_DIR zstd.h REQUIRED)
find_library(ZSTD_LIBRARY NAMES zstd REQUIRED)
add_library(dgcn_zstd INTERFACE)
target_include_directories(dgcn_zstd INTERFACE ${ZSTD_INCLUDE_DIR})
target_link_libraries(dgcn_zstd INTERFACE ${ZSTD_LIBRARY})

find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
add_library(dgcn_xxhash INTERFACE)
target_include_directories(dgcn_xxhash INTERFACE ${XXHASH_INCLUDE_DIR})
# Header-only use: every XXH function is inlined, no shared library needed.
target_compile_definitions(dgcn_xxhash INTERFACE XXH_INLINE_ALL)

# Debian's libzip CMake config also imports the zipcmp/zipmerge tools, which
# live in another package, so find the library directly.
if(NOT TARGET libzip::zip)
  find_path(LIBZIP_INCLUDE_DIR zip.h REQUIRED)
  find_library(LIBZIP_LIBRARY NAMES zip REQUIRED)
  add_library(libzip::zip INTERFACE IMPORTED)
  target_include_directories(libzip::zip INTERFACE ${LIBZIP_INCLUDE_DIR})
  target_link_libraries(libzip::zip INTERFACE ${LIBZIP_LIBRARY})
endif()

if(DGCN_WITH_TORCH)
  include(DgcnTorch)
endif()

if(DGCN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# METIS (Debian's libmetis-dev) for `dgcn-prep partition --method metis`.
# Optional, so hosts without it (the CUDA host's package bundle) still build;
# there --method metis is an error that says so, and --method random works.
find_path(METIS_INCLUDE_DIR metis.h)
find_library(METIS_LIBRARY NAMES metis)
add_library(dgcn_metis INTERFACE)
if(METIS_INCLUDE_DIR AND METIS_LIBRARY)
  target_include_directories(dgcn_metis INTERFACE ${METIS_INCLUDE_DIR})
  target_link_libraries(dgcn_metis INTERFACE ${METIS_LIBRARY})
  target_compile_definitions(dgcn_metis INTERFACE DGCN_HAVE_METIS=1)
  message(STATUS "dgcn: METIS ${METIS_LIBRARY}")
else()
  message(STATUS "dgcn: METIS not found: dgcn-prep partition offers --method random only")
endif()
