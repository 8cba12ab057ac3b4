# Every public header refuses to compile against other Boost headers than the library was built
# with, saying why (include/s3lect/detail/abi.hpp), and refuses a standard before C++20.
# other_boost/ holds a <boost/version.hpp> of Boost 1.0, found ahead of the real one.
#
# usage: cmake -DCXX=<compiler> -DSOURCE_DIR=<tree> -DGENERATED=<build>/include
#              -DWORK=<scratch dir> -P refuses_other_boost.cmake
file(GLOB headers RELATIVE ${SOURCE_DIR}/include ${SOURCE_DIR}/include/s3lect/*.hpp)
if(NOT headers)
  message(FATAL_ERROR "no public headers in ${SOURCE_DIR}/include/s3lect")
endif()
file(MAKE_DIRECTORY ${WORK})
set(includes -I${CMAKE_CURRENT_LIST_DIR}/other_boost -I${SOURCE_DIR}/include -I${GENERATED})

# expect_refusal(SOURCE MESSAGE FLAGS...): compiling SOURCE with FLAGS fails, saying MESSAGE first.
# -Wfatal-errors: the first error ends the compilation, so it must be the refusal.
function(expect_refusal source message)
  execute_process(COMMAND ${CXX} ${ARGN} -fsyntax-only -Wfatal-errors ${includes} ${source}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(status EQUAL 0)
    message(FATAL_ERROR "${source} compiled with ${ARGN}: it must be refused")
  endif()
  string(FIND "${out}" "${message}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${source} was refused, but not with '${message}':\n${out}")
  endif()
endfunction()

foreach(header IN LISTS headers)
  string(MAKE_C_IDENTIFIER ${header} name)
  file(WRITE ${WORK}/${name}.cpp "#include <${header}>\n")
  expect_refusal(${WORK}/${name}.cpp
    "these Boost headers (1_0) are not the ones libs3lect was compiled with" -std=c++20)
endforeach()
list(LENGTH headers count)
expect_refusal(${WORK}/s3lect_s3lect_hpp.cpp "s3lect needs C++20 or newer" -std=c++17)
message("${count} public headers refuse Boost 1.0; C++17 is refused")
