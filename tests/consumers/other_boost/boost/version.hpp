// Stands in for another Boost release's <boost/version.hpp>, found ahead of the real one
// (tests/consumers/refuses_other_boost.cmake): no libs3lect is ever built with Boost 1.0.
#pragma once
#define BOOST_VERSION 100000
#define BOOST_LIB_VERSION "1_0"
