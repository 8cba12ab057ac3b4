# How s3lect's own code compiles Boost.Asio, kept PRIVATE: a consumer's translation units see
# Boost's defaults or whatever the consumer chooses (docs/integration.md, "Asio settings").
#
# BOOST_ASIO_NO_DEPRECATED: s3lect itself uses no deprecated Asio API; every build of the
# library, the CLI and the chaos tools checks it.
#
# The renames: with BOOST_ASIO_NO_DEPRECATED, Asio 1.81 still defines its legacy allocation
# hooks (non-template inline functions, boost::asio::asio_handler_allocate and _deallocate),
# only returning an enum where the default build returns the memory. clang at -O0 emits that
# variant into s3lect's objects as a weak symbol, and a linker that meets those objects before
# an application's own copy keeps s3lect's: the application's handlers then allocate from a null
# pointer (measured: a deprecated-API program linked after such an archive crashed with SIGSEGV).
# s3lect's code never calls the hooks in this mode (they appear only in Asio's compile-time
# checks), so renaming them in s3lect's translation units leaves one definition in any program:
# the application's. tests/consumers/legacy_hooks.cmake checks the archive defines neither name.
add_library(s3lect_private_asio INTERFACE)
target_compile_definitions(s3lect_private_asio INTERFACE BOOST_ASIO_NO_DEPRECATED
  asio_handler_allocate=s3lect_private_asio_handler_allocate
  asio_handler_deallocate=s3lect_private_asio_handler_deallocate)
