# Note [Precompiled LibTorch headers]
# <torch/torch.h> costs ~20 s of every translation unit that includes it
# here, most of the LibTorch build. DGCN_PCH precompiles it once and every
# torch target reuses it: gcn.cpp goes from 23 s to 9 s. GCC only accepts a
# PCH built with the same -fPIC / -fPIE as its user, so the torch executables
# compile with -fPIC as the libraries do and one PCH serves both (a second,
# -fPIE one cost ~38 s of every build). A TU that does not need torch would
# get the header anyway, so only torch targets opt in (dgcn_torch_build_setup).
option(DGCN_PCH "Precompile LibTorch's headers once for every torch target" ON)

# Note [Unity builds]
# Even with the PCH, a torch TU costs 9-17 s, most of it instantiating and
# optimising the same inline LibTorch code (Tensor ops, IValue, c10::intrusive_ptr)
# again in every TU. Compiling a torch target's sources in batches of
# DGCN_UNITY_BATCH (CMake's UNITY_BUILD) does that once per batch: dgcn_models'
# 15 TUs take 53 s instead of 140 s and dgcn_train's 13 take 65 s instead of
# 148 s. The same holds, less, for targets whose every TU parses the same
# heavy headers: dgcn-prep, datasets/ and the tests (GoogleTest). The price is
# that names at file scope (anonymous namespaces included) must be unique
# across a target's sources. DGCN_UNITY=OFF compiles one TU per source, for a
# quicker rebuild after editing one file.
option(DGCN_UNITY "Compile LibTorch targets, dgcn-prep, datasets/ and tests in unity batches" ON)
set(DGCN_UNITY_BATCH 8 CACHE STRING "Sources per unity batch (DGCN_UNITY)")

if(DGCN_WITH_TORCH AND DGCN_PCH)
  file(WRITE ${CMAKE_BINARY_DIR}/dgcn_pch_host.cpp "// The translation unit that builds the PCH.\n")
  add_library(dgcn_torch_pch STATIC ${CMAKE_BINARY_DIR}/dgcn_pch_host.cpp)
  target_link_libraries(dgcn_torch_pch PRIVATE torch dgcn_options)
  target_precompile_headers(dgcn_torch_pch PRIVATE <torch/torch.h>)
  target_compile_options(dgcn_torch_pch PRIVATE -fpch-preprocess)
endif()

# dgcn_unity_build(targets...): compile the targets' sources in unity batches
# (DGCN_UNITY, Note [Unity builds]).
function(dgcn_unity_build)
  if(DGCN_UNITY)
    set_target_properties(${ARGN} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${DGCN_UNITY_BATCH})
  endif()
endfunction()

# dgcn_torch_build_setup(targets...): what every LibTorch target shares, the
# PCH and the unity batches.
function(dgcn_torch_build_setup)
  dgcn_unity_build(${ARGN})
  foreach(target ${ARGN})
    if(DGCN_WITH_TORCH AND DGCN_PCH)
      target_precompile_headers(${target} REUSE_FROM dgcn_torch_pch)
      # Lets ccache hash a PCH user's preprocessed text (Note [ccache across build folders]).
      target_compile_options(${target} PRIVATE -fpch-preprocess)
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "EXECUTABLE")
        # GCC uses a PCH only under the -fPIC/-fPIE it was built with; CMake
        # gives executables -fPIE, and -fPIC (last wins) is valid in them too.
        target_compile_options(${target} PRIVATE -fPIC)
      endif()
    endif()
  endforeach()
endfunction()
