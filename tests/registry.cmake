# Registries from the tree: a scratch copy of the tree gains an operator and its CPU
# kernel as two new files (tests/registry/) and nothing else, is configured with
# CVML_OPERATORS limited to it and relu, builds, runs it, and refuses a model needing a
# left-out operator by name (tests/scripts/add_operator.sh). About 20 s: it builds
# the core and the tool once.
if(TARGET cvml_tool AND NOT CMAKE_CROSSCOMPILING)
  set(launchers "")
  foreach(lang C CXX)
    if(CMAKE_${lang}_COMPILER_LAUNCHER)
      list(APPEND launchers "-DCMAKE_${lang}_COMPILER_LAUNCHER=${CMAKE_${lang}_COMPILER_LAUNCHER}")
    endif()
  endforeach()
  add_test(NAME registry.add_operator
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/add_operator.sh ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/add_operator ${launchers})
  # Its scratch build is a plain Debug build (it checks what registers, not speed; -O0
  # halves its compile time) whichever tree runs the test, so only the release tree's
  # run adds anything: scripts/test.sh leaves label nested_build out of the sanitizer
  # and embedded-profile runs.
  set_tests_properties(registry.add_operator PROPERTIES TIMEOUT 1200 LABELS nested_build)
endif()
