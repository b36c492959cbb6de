# `cmake --install` into a temporary prefix, then programs built against it with the
# CMake package and with pkg-config. A sanitized build installs sanitized libraries
# that plain consumers cannot link, so it is tested in the normal builds only.
if(NOT CVML_SANITIZE)
  add_test(NAME install.cmake_and_pkgconfig
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/install_test.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_test ${CMAKE_C_COMPILER}
            $<BOOL:${CVML_WITH_PLUGINS}>)
  set_tests_properties(install.cmake_and_pkgconfig PROPERTIES TIMEOUT 300)
endif()
