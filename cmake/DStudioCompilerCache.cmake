# Use ccache when it is installed: the set-up script installs it so that rebuilding a clean clone
# on the same machine costs seconds rather than minutes. CCACHE_BASEDIR makes paths relative, so a
# clone at another path (as CI makes) hits the same cache entries; the sloppiness settings are the
# ones precompiled headers need. Both must be set at compile time, hence `cmake -E env`.
find_program(DSTUDIO_CCACHE ccache)
if(DSTUDIO_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(_dstudio_launcher ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${DSTUDIO_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${_dstudio_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_dstudio_launcher})
endif()
