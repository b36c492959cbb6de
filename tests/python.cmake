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
