# With Boost.JSON linked (S3LECT_BOOST_JSON=LIBRARY), the archive defines none of Boost.JSON's
# own functions or objects: an application that links Boost::json too gets exactly one copy
# (docs/versioning.md#boostjson-linked-or-compiled-in). What <boost/json/src.hpp> would compile in
# are strong definitions (nm types T, D, B, R) in namespace boost::json; the weak ones (W, V, u)
# are inline functions and templates instantiated from the headers, which every user of the
# headers emits alike and the linker merges.
#
# usage: cmake -DARCHIVE=<libs3lect.a> -DNM=<nm> -P boost_json_symbols.cmake
execute_process(COMMAND ${NM} --defined-only ${ARCHIVE} RESULT_VARIABLE status
  OUTPUT_VARIABLE symbols ERROR_QUIET)
if(NOT status STREQUAL "0")
  message(FATAL_ERROR "${NM} ${ARCHIVE} failed with ${status}")
endif()
string(REGEX MATCHALL "[0-9a-f]+ [TDBR] _Z(T[VIS])?NK?5boost4json[A-Za-z0-9_]*" found "${symbols}")
if(found)
  list(LENGTH found count)
  list(SUBLIST found 0 10 first)
  string(REPLACE ";" "\n  " first "${first}")
  message(FATAL_ERROR "${ARCHIVE} defines ${count} Boost.JSON symbols, e.g.\n  ${first}")
endif()
string(REGEX MATCHALL "[0-9a-f]+ [WVu] _Z(T[VIS])?NK?5boost4json" weak "${symbols}")
list(LENGTH weak weak_count)
message("${ARCHIVE}: no Boost.JSON symbol defined (${weak_count} weak inline instantiations)")
