# The hardening Debian builds its own packages with: stack protector, fortified libc calls
# (optimised builds; _FORTIFY_SOURCE needs optimisation), read-only relocations bound at start.
# Position-independent executables are the compiler's default on Debian. Off under the sanitizers
# and the fuzzers, which instrument the same calls.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT DSTUDIO_SANITIZE AND NOT DSTUDIO_FUZZ)
  add_compile_options(-fstack-protector-strong $<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2>)
  add_link_options(LINKER:-z,relro LINKER:-z,now)
endif()
