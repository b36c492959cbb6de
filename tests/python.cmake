# The Python binding (python/cvml) against the built shared library.
set(cvml_sanitizer_preload "")
if(CVML_SANITIZE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
    OUTPUT_VARIABLE cvml_sanitizer_preload OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
add_test(NAME python.pytest
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/run_pytest.sh $<TARGET_FILE:cvml>
          ${PROJECT_SOURCE_DIR} ${cvml_sanitizer_preload})
set_tests_properties(python.pytest PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# The same tests against the package `cmake --install` puts in a temporary prefix,
# with only PYTHONPATH set. A sanitized build installs sanitized libraries that a
# plain python3 cannot load, so this runs in the normal builds only.
if(NOT CVML_SANITIZE)
  add_test(NAME python.installed
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/run_pytest_installed.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/python_installed)
  set_tests_properties(python.installed PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
