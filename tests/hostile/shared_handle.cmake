# The shared-handle stress test (hostile/shared_handle.cpp): one cifar_resnet20 net run
# by 8 threads at once, at CVML_NUM_THREADS 1 and 2, exact bytes each time; exit 77
# (skipped) without ../shared. Linux (reliability.cmake) and Windows under Wine
# (windows/windows_tests.cmake) register it the same way.
# cvml_add_shared_handle_tests(PREFIX TIMEOUT [ENV...]): tests PREFIX.shared_handle.t1/t2,
# each with the extra environment ENV.
function(cvml_add_shared_handle_tests prefix timeout)
  add_executable(cvml_shared_handle ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/shared_handle.cpp)
  target_include_directories(cvml_shared_handle PRIVATE ${PROJECT_SOURCE_DIR}/api)
  target_link_libraries(cvml_shared_handle PRIVATE cvml_static Threads::Threads)
  target_compile_options(cvml_shared_handle PRIVATE ${CVML_WARNINGS})
  foreach(n 1 2)
    set(env ${ARGN} CVML_NUM_THREADS=${n})
    add_test(NAME ${prefix}.shared_handle.t${n} COMMAND cvml_shared_handle
      ${PROJECT_SOURCE_DIR}/../shared/models/cifar_resnet20_2019/case 8 100)
    set_tests_properties(${prefix}.shared_handle.t${n} PROPERTIES
      ENVIRONMENT "${env}" SKIP_RETURN_CODE 77 TIMEOUT ${timeout})
  endforeach()
endfunction()
