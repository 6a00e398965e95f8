# splitbrain_discover_tests(TARGET [gtest_discover_tests arguments...])
#
# gtest_discover_tests with discovery that cannot fail a first run on a busy machine. By default
# CMake lists a test binary's tests right after linking it, with a 5 s limit: on a 2-core machine
# with both cores compiling, a binary that loads CUDA, cuDNN and NCCL took longer than that and
# the build failed, where a rerun passed. PRE_TEST lists the tests when ctest starts instead (the
# build never waits on it), and the limit is generous because listing runs no test.
include(GoogleTest)

function(splitbrain_discover_tests target)
  gtest_discover_tests(${target} ${ARGN} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 300)
endfunction()
