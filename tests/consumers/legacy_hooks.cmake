# Fails if the archive ARCHIVE defines (as any symbol type but U, undefined) Asio's legacy
# allocation hooks boost::asio::asio_handler_allocate or asio_handler_deallocate: s3lect's
# variants of them are the ones a program must never get (cmake/private_asio_settings.cmake).
#
# usage: cmake -DARCHIVE=<libs3lect.a> -DNM=<nm> -P legacy_hooks.cmake
execute_process(COMMAND ${NM} --defined-only ${ARCHIVE} RESULT_VARIABLE status
  OUTPUT_VARIABLE symbols ERROR_QUIET)
if(NOT status STREQUAL "0")
  message(FATAL_ERROR "${NM} ${ARCHIVE} failed with ${status}")
endif()
string(REGEX MATCHALL "_ZN5boost4asio2[13]asio_handler_(de)?allocateE[A-Za-z0-9_]*" found
  "${symbols}")
if(found)
  message(FATAL_ERROR "${ARCHIVE} defines Asio's legacy hooks: ${found}")
endif()
message("${ARCHIVE}: no legacy Asio allocation hook defined")
