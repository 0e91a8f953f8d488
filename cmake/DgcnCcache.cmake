# Note [ccache across build folders]
# CI builds the same sources in several folders: build/ (scripts/build.sh),
# build-python/ (pip install .), build-cpu/ and the GPU check's. With ccache
# found (DGCN_CCACHE=AUTO) every compile goes through it, keyed on paths
# relative to the source tree (base_dir, no hash of the build folder), so a
# folder at the same depth as build/ reuses what build/ compiled: pip install
# after scripts/build.sh compiles only the bindings. The LibTorch PCH needs
# sloppiness pch_defines,time_macros and -fpch-preprocess (dgcn_torch_build_setup)
# for ccache to cache its users.
set(DGCN_CCACHE AUTO CACHE STRING "AUTO/ON/OFF: compile through ccache (AUTO: when found)")

if(NOT DGCN_CCACHE STREQUAL "OFF")
  find_program(DGCN_CCACHE_PROGRAM ccache)
  if(DGCN_CCACHE_PROGRAM)
    set(dgcn_ccache_launcher
        ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=1
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime ${DGCN_CCACHE_PROGRAM})
    foreach(lang C CXX CUDA)
      if(NOT CMAKE_${lang}_COMPILER_LAUNCHER)
        set(CMAKE_${lang}_COMPILER_LAUNCHER ${dgcn_ccache_launcher})
      endif()
    endforeach()
    message(STATUS "dgcn: compiling through ccache (${DGCN_CCACHE_PROGRAM}); DGCN_CCACHE=OFF to stop")
  elseif(DGCN_CCACHE STREQUAL "ON")
    message(FATAL_ERROR "DGCN_CCACHE=ON but ccache was not found")
  endif()
endif()
