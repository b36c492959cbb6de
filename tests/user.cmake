# What a new user meets: the installed tree finds its plugins by itself
# (tests/scripts/installed_plugin_test.sh). A sanitized build installs sanitized
# libraries that plain programs cannot link, so this runs in the normal builds only.
if(NOT CVML_SANITIZE AND CVML_WITH_PLUGINS AND TARGET cvml_tool)
  add_test(NAME user.installed_plugins
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/installed_plugin_test.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/installed_plugins ${CMAKE_C_COMPILER})
  set_tests_properties(user.installed_plugins PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
