// Included first by every public header: refuses to compile before C++20, or against Boost headers
// other than the ones libs3lect was compiled with (docs/versioning.md#abi).
//
// Why: the compiled library and the application share Boost types across its interface, and
// their layout is Boost's to change from one release to the next (any_completion_handler, which
// the library's virtual functions take, changed after Boost 1.81). An application compiled with
// other Boost headers links without a complaint and then breaks at run time: an ODR violation
// that no linker reports. Building s3lect from source with the application's Boost
// (add_subdirectory, FetchContent) records that Boost, so such a build always passes.
#pragma once

// C++20 is the minimum; nothing (pkg-config's flags included) sets it for the application, so that
// a C++23 application stays C++23.
#if __cplusplus < 202002L
#error "s3lect needs C++20 or newer: compile with -std=c++20 (or a newer standard)"
#endif

#include <s3lect/detail/build_config.hpp>

#include <boost/version.hpp>

static_assert(
    BOOST_VERSION == S3LECT_BUILT_WITH_BOOST_VERSION,
    "s3lect: these Boost headers (" BOOST_LIB_VERSION
    ") are not the ones libs3lect was compiled with (Boost " S3LECT_BUILT_WITH_BOOST_VERSION_STRING
    "): the library and the application share Boost types whose layout differs "
    "between Boost releases. Build with Boost " S3LECT_BUILT_WITH_BOOST_VERSION_STRING
    ", or build s3lect from source with this Boost (add_subdirectory or "
    "FetchContent). See docs/versioning.md#abi.");
