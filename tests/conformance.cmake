# The conformance runner (tests/conformance): the shared vectors through the upstream
# API, the real model, the API edge cases.
file(GLOB CVML_CONFORMANCE_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/conformance/*.cpp)
add_executable(cvml_conformance_tests ${CVML_CONFORMANCE_TESTS})
target_include_directories(cvml_conformance_tests PRIVATE ${PROJECT_SOURCE_DIR}/source
  ${PROJECT_SOURCE_DIR}/api ${CMAKE_CURRENT_SOURCE_DIR}/conformance)
target_link_libraries(cvml_conformance_tests PRIVATE cvml_static GTest::gtest GTest::gtest_main)
target_compile_options(cvml_conformance_tests PRIVATE ${CVML_WARNINGS})
target_compile_definitions(cvml_conformance_tests PRIVATE
  CVML_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  CVML_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
  # The two-thread test runs exactly when the library was built with threads.
  CVML_WITH_THREADS=$<BOOL:${CVML_WITH_THREADS}>)
gtest_discover_tests(cvml_conformance_tests DISCOVERY_TIMEOUT 120)

# The whole conformance run (every case, twice, and in two threads; the real model)
# under valgrind: no invalid read, no uninitialised use, no leak.
find_program(VALGRIND valgrind)
if(VALGRIND)
  add_test(NAME conformance.valgrind
    COMMAND ${VALGRIND} --error-exitcode=9 --leak-check=full
            --errors-for-leak-kinds=definite,indirect -q $<TARGET_FILE:cvml_conformance_tests>)
  set_tests_properties(conformance.valgrind PROPERTIES LABELS valgrind TIMEOUT 900)
endif()
