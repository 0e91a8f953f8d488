# Warnings and per-target defaults shared by every dgcn target.
add_library(dgcn_options INTERFACE)
target_compile_options(dgcn_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
if(DGCN_NATIVE)
  target_compile_options(dgcn_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()
target_include_directories(dgcn_options INTERFACE ${PROJECT_SOURCE_DIR})
