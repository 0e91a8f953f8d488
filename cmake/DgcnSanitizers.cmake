# DGCN_SANITIZE: a list of clang/gcc sanitizers for the whole build
# ("address;undefined" or "thread"); DGCN_FUZZ adds libFuzzer's coverage
# instrumentation (and needs clang). UBSan stops at the first report, so a
# test or a fuzz run fails instead of printing and going on.
# The build type the sanitizer scripts use: -O1 (what the sanitizers'
# authors recommend: fast enough, stacks still exact), asserts on.
set(CMAKE_C_FLAGS_SANITIZE "-O1" CACHE STRING "C flags of the Sanitize build type")
set(CMAKE_CXX_FLAGS_SANITIZE "-O1" CACHE STRING "C++ flags of the Sanitize build type")
set(DGCN_SANITIZE "" CACHE STRING "Sanitizers for every target: address;undefined, or thread (empty: none)")
option(DGCN_FUZZ "Build the libFuzzer harnesses of fuzz/ (clang)" OFF)

set(dgcn_sanitize_flags "")
foreach(s ${DGCN_SANITIZE})
  list(APPEND dgcn_sanitize_flags -fsanitize=${s})
endforeach()
if("undefined" IN_LIST DGCN_SANITIZE)
  list(APPEND dgcn_sanitize_flags -fno-sanitize-recover=undefined)
endif()
if(DGCN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DGCN_FUZZ needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  list(APPEND dgcn_sanitize_flags -fsanitize=fuzzer-no-link)
endif()
if(dgcn_sanitize_flags)
  # Line tables are enough for symbolized reports and cost far less to
  # build than full debug info.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    list(APPEND dgcn_sanitize_flags -fno-omit-frame-pointer -gline-tables-only)
  else()
    list(APPEND dgcn_sanitize_flags -fno-omit-frame-pointer -g1)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${dgcn_sanitize_flags}>")
  add_link_options(${dgcn_sanitize_flags})
  message(STATUS "dgcn: sanitizers ${dgcn_sanitize_flags}")
endif()
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # The lock annotations of base/thread_annotations.h, checked.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety>)
endif()
