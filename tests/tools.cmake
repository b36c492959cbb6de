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
# The cross-CPU probe of tools/bench/compare.sh runs and reports every step (skipped where
# the process has fewer than two CPUs), and refuses a bad repeat count.
if(TARGET cvml_xcore_probe)
  add_test(NAME tools.xcore_probe COMMAND $<TARGET_FILE:cvml_xcore_probe> 3)
  set_tests_properties(tools.xcore_probe PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60
    PASS_REGULAR_EXPRESSION "\"read_remote_us\": [0-9]+\\.[0-9]+, \"read_local_us\": [0-9]+\\.[0-9]+, \"write_kb\": 200, \"write_remote_us\": [0-9]+\\.[0-9]+, \"write_local_us\": [0-9]+\\.[0-9]+")
  add_test(NAME tools.xcore_probe_usage COMMAND $<TARGET_FILE:cvml_xcore_probe> 0)
  set_tests_properties(tools.xcore_probe_usage PROPERTIES TIMEOUT 60
    PASS_REGULAR_EXPRESSION "usage: cvml-xcore-probe \\[REPEATS")
endif()
