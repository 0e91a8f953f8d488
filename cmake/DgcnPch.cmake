# Note [Precompiled LibTorch headers]
# <torch/torch.h> costs ~20 s of every translation unit that includes it
# here, most of the LibTorch build. DGCN_PCH precompiles it once and every
# torch target reuses it: gcn.cpp goes from 23 s to 9 s. GCC only accepts a
# PCH built with the same -fPIC / -fPIE as its user, so there are two hosts,
# one for libraries (-fPIC) and one for executables (-fPIE). A TU that does
# not need torch gets the header anyway, so only torch targets opt in
# (dgcn_use_torch_pch).
option(DGCN_PCH "Precompile LibTorch's headers once for every torch target" ON)

if(DGCN_WITH_TORCH AND DGCN_PCH)
  file(WRITE ${CMAKE_BINARY_DIR}/dgcn_pch_host.cpp "// The translation unit that builds the PCH.\n")
  add_library(dgcn_torch_pch_lib STATIC ${CMAKE_BINARY_DIR}/dgcn_pch_host.cpp)
  target_link_libraries(dgcn_torch_pch_lib PRIVATE torch dgcn_options)
  target_precompile_headers(dgcn_torch_pch_lib PRIVATE <torch/torch.h>)
  add_library(dgcn_torch_pch_exe STATIC ${CMAKE_BINARY_DIR}/dgcn_pch_host.cpp)
  set_target_properties(dgcn_torch_pch_exe PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(dgcn_torch_pch_exe PRIVATE -fPIE)
  target_link_libraries(dgcn_torch_pch_exe PRIVATE torch dgcn_options)
  target_precompile_headers(dgcn_torch_pch_exe PRIVATE <torch/torch.h>)
endif()

function(dgcn_use_torch_pch)
  if(NOT (DGCN_WITH_TORCH AND DGCN_PCH))
    return()
  endif()
  foreach(target ${ARGN})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_precompile_headers(${target} REUSE_FROM dgcn_torch_pch_exe)
    else()
      target_precompile_headers(${target} REUSE_FROM dgcn_torch_pch_lib)
    endif()
  endforeach()
endfunction()
