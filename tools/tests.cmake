# Included at the end of tests/CMakeLists.txt: the chaos tools' unit and integration tests
# (tests/unit/chaos_checker_test.cpp, tests/unit/fault_proxy_control_test.cpp,
# tests/integration/fault_proxy_test.cpp) need the tools' core library.
if(TARGET s3lect_chaos_core)
  target_link_libraries(s3lect_unit_tests PRIVATE s3lect_chaos_core)
  if(TARGET s3lect_integration_tests)
    target_link_libraries(s3lect_integration_tests PRIVATE s3lect_chaos_core)
  endif()
endif()
