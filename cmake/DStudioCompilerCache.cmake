# Use ccache when it is installed: the set-up script installs it so that rebuilding a clean clone
# on the same machine costs seconds rather than minutes.
find_program(DSTUDIO_CCACHE ccache)
if(DSTUDIO_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER ${DSTUDIO_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${DSTUDIO_CCACHE})
  # Precompiled headers and ccache agree only with these settings.
  set(ENV{CCACHE_SLOPPINESS} "pch_defines,time_macros,include_file_mtime,include_file_ctime")
endif()
