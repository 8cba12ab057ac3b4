# Runs a test command and passes only if it exits 0 AND its output (stdout and stderr together)
# matches EXPECT. CTest's PASS_REGULAR_EXPRESSION alone ignores the exit status, so a program
# that crashes, or a sanitizer that aborts it, after the expected line would still pass.
#
# usage: cmake -DEXPECT=<regex> -P run_and_expect.cmake -- <command> [args...]
# EXPECT is a CMake regular expression, as PASS_REGULAR_EXPRESSION takes ("." matches newlines).
if(NOT DEFINED EXPECT)
  message(FATAL_ERROR "run_and_expect.cmake: -DEXPECT=<regex> is required")
endif()

set(command)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "run_and_expect.cmake: no command after --")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
# Passed on, so that CTest's log shows what the command said.
message("${output}")
if(NOT status STREQUAL "0")
  message(FATAL_ERROR "run_and_expect.cmake: the command exited with ${status}, not 0")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "run_and_expect.cmake: the output does not match '${EXPECT}'")
endif()
