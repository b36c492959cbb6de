# The core links from C: libcvml.a needs no C++ runtime, and an example builds with
# the C compiler and -lm -lpthread -ldl alone.
set(CVML_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/scripts)
find_program(CVML_GCC NAMES gcc)
if(NOT CVML_GCC)
  set(CVML_GCC ${CMAKE_C_COMPILER})
endif()
set(cvml_nm ${CMAKE_NM})
if(NOT cvml_nm)
  set(cvml_nm nm)
endif()

add_test(NAME clink.no_cxx_runtime
  COMMAND sh ${CVML_SCRIPTS}/check_no_cxx_runtime.sh $<TARGET_FILE:cvml_static> ${cvml_nm})
add_test(NAME clink.scanner_catches_std
  COMMAND sh ${CVML_SCRIPTS}/check_scanner_selftest.sh ${CMAKE_CXX_COMPILER} ${CMAKE_C_COMPILER}
          ${CMAKE_AR} ${cvml_nm} ${CMAKE_CURRENT_BINARY_DIR}/scanner_selftest)
if(TARGET example_build_and_run)
  add_test(NAME clink.gcc_static_example
    COMMAND sh ${CVML_SCRIPTS}/c_static_link.sh ${CVML_GCC} $<TARGET_FILE:cvml_static>
            ${PROJECT_SOURCE_DIR}/api ${PROJECT_SOURCE_DIR}/examples/build_and_run.c
            ${CMAKE_CURRENT_BINARY_DIR}/c_static_link
            ${PROJECT_SOURCE_DIR}/examples/models/tiny_convnet.expected.json)
  if(CVML_SANITIZE)
    set_tests_properties(clink.gcc_static_example PROPERTIES
      ENVIRONMENT "CVML_LINK_EXTRA=-fsanitize=address,undefined")
  endif()
endif()
