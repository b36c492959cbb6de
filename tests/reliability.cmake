# Reliability (issue 18): hostile models, shared handles, hostile plugin files.
# Hostile models of issue 18: gas query + load + one inference within 10 s and 512 MiB
# each, in a fresh process (tests/hostile). Not under sanitizers or valgrind: the
# bounds are for the release library.
add_executable(cvml_hostile ${CMAKE_CURRENT_SOURCE_DIR}/hostile/hostile_run.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/hostile/hostile_models.cpp)
target_include_directories(cvml_hostile PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
  ${PROJECT_SOURCE_DIR}/api)
target_link_libraries(cvml_hostile PRIVATE cvml_static)
target_compile_options(cvml_hostile PRIVATE ${CVML_WARNINGS})
if(NOT CVML_SANITIZE)
  add_test(NAME reliability.hostile_models COMMAND cvml_hostile --limit-s 10 --limit-mib 512
    --kill-s 30)
  set_tests_properties(reliability.hostile_models PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)
endif()
# The same models loaded for the GPU, on the emulated CUDA plugin, within the same bounds;
# every island kept there (CVML_CUDA_ISLAND_WORK=0), so that the graphs of relu and
# concatenate nodes run whole on "cuda" (--on-cuda), the fan-out ones placed within a
# second: the CUDA device plans with the core's planner and fusion walk.
if(NOT CVML_SANITIZE AND TARGET cvml_cuda_emu)
  add_test(NAME reliability.hostile_models.cuda COMMAND cvml_hostile --limit-s 10
    --limit-mib 512 --kill-s 30 --device cuda --place-s 1 --on-cuda heads_4000
    --on-cuda heads_8000 --on-cuda fanout_concat_4000 --on-cuda fanout_concat_8000)
  set_tests_properties(reliability.hostile_models.cuda PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE
    ENVIRONMENT "CVML_PLUGIN_PATH=${CMAKE_BINARY_DIR}/plugins/emu;CVML_CUDA_ISLAND_WORK=0")
  add_dependencies(cvml_hostile cvml_cuda_emu)
endif()

# A shared handle from 8 threads, at CVML_NUM_THREADS 1 and 2 (TSan: scripts/test.sh).
# Built without threads (CVML_WITH_THREADS=OFF, the embedded profile) the library takes no
# locks and its callers serialize their calls (README, "Build options"): not tested there.
if(TARGET Threads::Threads AND CVML_WITH_THREADS)
  include(${CMAKE_CURRENT_SOURCE_DIR}/hostile/shared_handle.cmake)
  cvml_add_shared_handle_tests(reliability 300)
endif()

# Hostile files in the plugin path: FIFO, directory, truncated ELF, bad declarations.
if(CVML_WITH_PLUGINS AND TARGET cvml_testplugin)
  foreach(p decl_byte decl_function)
    add_library(cvml_hostile_${p} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/hostile/plugins/${p}.c)
    target_compile_options(cvml_hostile_${p} PRIVATE -fvisibility=hidden)
  endforeach()
  add_executable(cvml_hostile_plugin_tests ${CMAKE_CURRENT_SOURCE_DIR}/hostile/hostile_plugins_test.cpp)
  target_link_libraries(cvml_hostile_plugin_tests PRIVATE cvml_static GTest::gtest GTest::gtest_main)
  target_compile_options(cvml_hostile_plugin_tests PRIVATE ${CVML_WARNINGS})
  target_compile_definitions(cvml_hostile_plugin_tests PRIVATE
    CVML_DECL_BYTE_PLUGIN="$<TARGET_FILE:cvml_hostile_decl_byte>"
    CVML_DECL_FUNCTION_PLUGIN="$<TARGET_FILE:cvml_hostile_decl_function>"
    CVML_GOOD_PLUGIN="$<TARGET_FILE:cvml_testplugin>")
  add_dependencies(cvml_hostile_plugin_tests cvml_hostile_decl_byte cvml_hostile_decl_function
    cvml_testplugin)
  gtest_discover_tests(cvml_hostile_plugin_tests DISCOVERY_TIMEOUT 60)
endif()

# Nanoseconds per unit of gas for every operator on hostile shapes (issue 18): fails when
# one exceeds a generous bound (docs/reliability.md). Release library only.
add_executable(cvml_ns_per_gas ${CMAKE_CURRENT_SOURCE_DIR}/hostile/ns_per_gas.cpp)
target_include_directories(cvml_ns_per_gas PRIVATE ${PROJECT_SOURCE_DIR}/api)
target_link_libraries(cvml_ns_per_gas PRIVATE cvml_static)
target_compile_options(cvml_ns_per_gas PRIVATE ${CVML_WARNINGS})
if(NOT CVML_SANITIZE)
  add_test(NAME reliability.ns_per_gas COMMAND cvml_ns_per_gas)
  set_tests_properties(reliability.ns_per_gas PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
    LABELS reliability)
endif()
