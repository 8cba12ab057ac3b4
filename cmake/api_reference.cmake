# The `docs` target: the API reference from the public headers (docs/Doxyfile.in), HTML in
# <build>/docs/html. Doxygen (Debian's `doxygen`) fails it on any warning, an undocumented
# public declaration among them; CTest runs it as docs.reference (label docs). Without Doxygen
# the target says how to get it and fails, and the test is not defined.
find_package(Doxygen QUIET)
set(S3LECT_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs)
if(DOXYGEN_FOUND)
  configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${PROJECT_BINARY_DIR}/Doxyfile @ONLY)
  file(GLOB s3lect_reference_inputs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/s3lect/*.hpp)
  # A stamp, written only when Doxygen succeeded: a failed run leaves HTML behind, which must
  # not count as up to date.
  add_custom_command(OUTPUT ${S3LECT_DOCS_OUTPUT}/reference.stamp
    COMMAND ${CMAKE_COMMAND} -E make_directory ${S3LECT_DOCS_OUTPUT}
    COMMAND Doxygen::doxygen ${PROJECT_BINARY_DIR}/Doxyfile
    COMMAND ${CMAKE_COMMAND} -E touch ${S3LECT_DOCS_OUTPUT}/reference.stamp
    DEPENDS ${s3lect_reference_inputs} ${PROJECT_SOURCE_DIR}/docs/reference.md
      ${PROJECT_BINARY_DIR}/Doxyfile
    COMMENT "API reference: ${S3LECT_DOCS_OUTPUT}/html/index.html"
    VERBATIM)
  add_custom_target(docs DEPENDS ${S3LECT_DOCS_OUTPUT}/reference.stamp)
else()
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E echo "docs: Doxygen not found (Debian: apt install doxygen)"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
endif()
