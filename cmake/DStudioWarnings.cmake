# Warnings live on an INTERFACE target that every project target links privately, so they never
# leak into code that consumes our headers.
add_library(dstudio_warnings INTERFACE)
target_compile_options(dstudio_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                 -Wno-missing-field-initializers>)

option(DSTUDIO_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(DSTUDIO_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
