# Run at build time (POST_BUILD) by tunescope_add_suite_tests: lists a test program's
# suites and writes one CTest entry per suite. One process per suite instead of one per
# test case: each process start loads the CUDA libraries (about 0.1 s), which made
# per-case registration spend most of CTest's time starting processes.
# In: TEST_EXECUTABLE, TEST_PREFIX, OUTPUT, SKIP_CODE, ENVIRONMENT.
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${rc}): ${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(count 0)
foreach(line IN LISTS lines)
  # Suite lines start in column 0 and end with '.', optionally followed by a comment.
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.")
    set(suite "${CMAKE_MATCH_1}")
    if(suite MATCHES "^DISABLED_|/DISABLED_")
      continue()
    endif()
    set(name "${TEST_PREFIX}:${suite}")
    string(APPEND script
      "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==] "
      "[==[--all-skipped-exit-code=${SKIP_CODE}]==])\n"
      "set_tests_properties([==[${name}]==] PROPERTIES SKIP_RETURN_CODE ${SKIP_CODE} "
      "ENVIRONMENT [==[${ENVIRONMENT}]==])\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suites")
endif()
file(WRITE "${OUTPUT}" "${script}")
