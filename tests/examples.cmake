# The examples on the bundled model: the C programs, the upstream-API program, and the
# Go program (skipped with a message when no Go toolchain is installed).
set(cvml_example_preload "")
if(CVML_SANITIZE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
    OUTPUT_VARIABLE cvml_example_preload OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
foreach(ex load_and_run cuda_fallback upstream_api)
  if(TARGET example_${ex})
    add_test(NAME examples.${ex}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/run_example.sh $<TARGET_FILE:example_${ex}>
              ${PROJECT_SOURCE_DIR})
  endif()
endforeach()
if(TARGET example_build_and_run)
  add_test(NAME examples.build_and_run COMMAND example_build_and_run)
  add_test(NAME examples.go
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/go_example.sh $<TARGET_FILE:cvml>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/go_example ${cvml_example_preload})
  set_tests_properties(examples.go PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
