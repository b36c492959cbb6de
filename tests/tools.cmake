# The cvml tool: usage and exit codes, the bundled model, every conformance case and
# the real model (skipped with a message when ../shared is absent).
if(TARGET cvml_tool)
  foreach(mode usage bundled conformance real)
    add_test(NAME tools.${mode}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/tool_test.sh $<TARGET_FILE:cvml_tool>
              ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/tool_test_${mode} ${mode})
    set_tests_properties(tools.${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
endif()
