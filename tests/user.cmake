# What a new user meets: the installed tree finds its plugins by itself
# (tests/scripts/installed_plugin_test.sh). A sanitized build installs sanitized
# libraries that plain programs cannot link, so this runs in the normal builds only.
if(NOT CVML_SANITIZE AND CVML_WITH_PLUGINS AND TARGET cvml_tool)
  add_test(NAME user.installed_plugins
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/installed_plugin_test.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/installed_plugins ${CMAKE_C_COMPILER})
  set_tests_properties(user.installed_plugins PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# `cvml run` on a ResNet-18-sized model peaks within 1.2 x `cvml bench`'s RSS (the
# params are streamed, not read whole first). Sanitizers change RSS: normal builds only.
if(NOT CVML_SANITIZE AND TARGET cvml_tool)
  add_test(NAME user.run_memory
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/run_memory_test.sh $<TARGET_FILE:cvml_tool>
            ${CMAKE_CURRENT_BINARY_DIR}/run_memory)
  set_tests_properties(user.run_memory PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# Every command of the README and the examples' READMEs, as written, in a fresh copy
# of the tree (tests/scripts/docs_test.sh). It installs into a scratch HOME and builds
# programs against the installed tree: normal, full builds only.
if(NOT CVML_SANITIZE AND NOT CVML_MINIMAL AND CVML_WITH_PLUGINS AND TARGET cvml_tool)
  add_test(NAME user.docs_commands
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/docs_test.sh ${PROJECT_SOURCE_DIR}
            ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/docs_commands)
  set_tests_properties(user.docs_commands PROPERTIES TIMEOUT 900)
endif()
