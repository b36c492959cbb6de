# The unit tests and the conformance runner of a cross build (aarch64, Windows), built
# against GoogleTest from Debian's sources, which ships no cross build of it. (In
# tests/cross/, out of the native build's glob of tests/*.cmake.) Included
# by tests/arm/arm_tests.cmake and tests/windows/windows_tests.cmake, which set
# cvml_cross_test_options (extra compile options) first and add their own tests.
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
add_subdirectory(/usr/src/googletest ${CMAKE_CURRENT_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)

function(cvml_cross_gtest target)
  add_executable(${target} ${ARGN})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/source
    ${PROJECT_SOURCE_DIR}/api ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/conformance)
  target_link_libraries(${target} PRIVATE cvml_static gtest gtest_main)
  target_compile_options(${target} PRIVATE ${CVML_WARNINGS} ${cvml_cross_test_options})
  target_compile_definitions(${target} PRIVATE CVML_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CVML_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
    CVML_WITH_THREADS=$<BOOL:${CVML_WITH_THREADS}>)
endfunction()

file(GLOB cvml_unit_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/*_test.cpp)
cvml_cross_gtest(cvml_unit_tests ${cvml_unit_sources} ${CMAKE_CURRENT_SOURCE_DIR}/unit/op_runner.cpp)
file(GLOB cvml_conformance_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/conformance/*.cpp)
cvml_cross_gtest(cvml_conformance_tests ${cvml_conformance_sources})
