# Sanitizer and fuzzing builds (clang; tools/sanitize.sh drives them):
#   SPLITBRAIN_SANITIZE=address,undefined  instruments every target; undefined behaviour aborts.
#   SPLITBRAIN_FUZZ=ON                      builds the libFuzzer targets of tests/fuzz/.
set(SPLITBRAIN_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined (clang or gcc)")
option(SPLITBRAIN_FUZZ "Build the libFuzzer targets (clang)" OFF)

if(SPLITBRAIN_SANITIZE)
  add_compile_options(-fsanitize=${SPLITBRAIN_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${SPLITBRAIN_SANITIZE})
endif()
if(SPLITBRAIN_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "SPLITBRAIN_FUZZ needs clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++-14")
endif()
