# Packages, built by cpack from an installed tree: two .deb packages and one tarball.
#   s3lect         the tool, its man page (generated from its own --help at build time by
#                  packaging/make-man-page.sh), the systemd unit template s3lect@.service and an
#                  example of its environment file (docs/operations.md#running-under-systemd);
#   libs3lect-dev  the static library, the headers, the CMake package and the pkg-config file.
# The tarball holds both. Configure with the prefix the files will live under (the "package"
# preset: the release build with /usr), which the unit and the pkg-config file name.
# tests/package/run.sh builds, installs and checks them.

if(TARGET s3lect_cli)
  set(S3LECT_MAN_PAGE ${PROJECT_BINARY_DIR}/s3lect.1.gz)
  # Without -n, gzip stores the time: the page would differ from build to build.
  add_custom_command(OUTPUT ${S3LECT_MAN_PAGE}
    COMMAND bash -c "set -o pipefail; bash \"$0\" \"$1\" \"$2\" | gzip -9n > \"$3\""
            ${PROJECT_SOURCE_DIR}/packaging/make-man-page.sh $<TARGET_FILE:s3lect_cli>
            ${PROJECT_VERSION} ${S3LECT_MAN_PAGE}
    DEPENDS s3lect_cli ${PROJECT_SOURCE_DIR}/packaging/make-man-page.sh
    COMMENT "Generating the s3lect(1) man page from s3lect --help"
    VERBATIM)
  add_custom_target(s3lect_man_page ALL DEPENDS ${S3LECT_MAN_PAGE})
  install(FILES ${S3LECT_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)

  set(S3LECT_UNIT_BINARY ${CMAKE_INSTALL_FULL_BINDIR}/s3lect)
  configure_file(packaging/s3lect@.service.in ${PROJECT_BINARY_DIR}/s3lect@.service @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/s3lect@.service DESTINATION lib/systemd/system
    COMPONENT cli)
  install(FILES packaging/s3lect.env DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT cli)
endif()

set(CPACK_PACKAGE_NAME s3lect)
set(CPACK_PACKAGE_VENDOR s3lect)
set(CPACK_PACKAGE_CONTACT "s3lect maintainers <s3lect@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
# Strips the tool; a static library is never stripped (its symbols are what a consumer links).
set(CPACK_STRIP_FILES TRUE)
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME s3lect)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_CLI_DESCRIPTION "The s3lect tool.
s3lect run campaigns for a lock in an S3 bucket and runs a command only while it
leads; status, release and check inspect and manage the lock. With a man page and
the systemd unit template s3lect@.service.")
# dpkg-shlibdeps (dpkg-dev) finds the tool's shared libraries: libc, libstdc++, libssl.
set(CPACK_DEBIAN_CLI_PACKAGE_SHLIBDEPS ON)
# Added to what dpkg-shlibdeps finds: the system roots that verify HTTPS to AWS when no --ca-file
# is given, which minimal Debian systems (debootstrap minbase, slim images) lack.
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "ca-certificates")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libs3lect-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(S3LECT_DEB_BOOST ${Boost_VERSION_MAJOR}.${Boost_VERSION_MINOR})
set(CPACK_DEBIAN_DEV_DESCRIPTION "The s3lect C++ library.
The static library, its headers, and the CMake (find_package(s3lect)) and
pkg-config files. Needs C++20, OpenSSL 3 and Boost ${Boost_VERSION} exactly,
the Boost it was compiled with (docs/versioning.md#abi).")
# What a consumer's build needs: the headers include Boost.Asio, of the very version the library
# was compiled with (the headers refuse another); the library links OpenSSL and, unless compiled
# in, Boost.JSON.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libboost${S3LECT_DEB_BOOST}-dev, libssl-dev (>= 3)")
if(S3LECT_BOOST_JSON_MODE STREQUAL "LIBRARY")
  string(APPEND CPACK_DEBIAN_DEV_PACKAGE_DEPENDS ", libboost-json${S3LECT_DEB_BOOST}-dev")
endif()

include(CPack)
