# Plugin tests: a test device built as its own shared library through the plugin ABI
# (tests/plugins/test_plugin.cpp), variants the loader must refuse, and GoogleTest
# cases for loading, partitioning, boundary copies, fallback and byte equality.
if(NOT CVML_WITH_PLUGINS)
  return()
endif()

set(cvml_plugin_dir ${CMAKE_CURRENT_BINARY_DIR}/plugins)
function(cvml_test_plugin name dir)
  add_library(${name} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/test_plugin.cpp)
  # The plugin ABI's header alone (no source/): everything else comes through the host.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/api
                             ${CMAKE_CURRENT_SOURCE_DIR}/plugins)
  target_compile_options(${name} PRIVATE ${CVML_WARNINGS} -fvisibility=hidden)
  target_compile_definitions(${name} PRIVATE ${ARGN})
  # A plugin links nothing of libcvml: everything comes through the host table.
  target_link_options(${name} PRIVATE -Wl,--no-undefined)
  set_target_properties(${name} PROPERTIES PREFIX "lib" OUTPUT_NAME ${name}
                        LIBRARY_OUTPUT_DIRECTORY ${cvml_plugin_dir}/${dir})
endfunction()
cvml_test_plugin(cvml_testplugin good)
cvml_test_plugin(cvml_testplugin_badabi bad TEST_PLUGIN_WRONG_ABI)
cvml_test_plugin(cvml_testplugin_fail bad TEST_PLUGIN_FAIL_ENTRY)
add_library(cvml_notaplugin MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/not_a_plugin.c)
set_target_properties(cvml_notaplugin PROPERTIES PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${cvml_plugin_dir}/bad)

# The C99 plugin (tests/plugins/c_plugin.c), against api/ alone, in its ABI variants;
# tests/install builds the same file out of the tree against the installed package.
function(cvml_c_test_plugin name)
  add_library(${name} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/c_plugin.c)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/api)
  set_target_properties(${name} PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF PREFIX "lib"
                        OUTPUT_NAME ${name} LIBRARY_OUTPUT_DIRECTORY ${cvml_plugin_dir}/c)
  target_compile_options(${name} PRIVATE -Wall -Wextra -pedantic -Werror -fvisibility=hidden)
  target_compile_definitions(${name} PRIVATE ${ARGN})
  target_link_options(${name} PRIVATE -Wl,--no-undefined)
endfunction()
cvml_c_test_plugin(cvml_cplugin)
cvml_c_test_plugin(cvml_cplugin_old CPLUGIN_OLDER_MINOR)
cvml_c_test_plugin(cvml_cplugin_new CPLUGIN_NEWER_MINOR)
cvml_c_test_plugin(cvml_cplugin_next CPLUGIN_NEXT_MAJOR)
if(TARGET cvml_tool)
  add_test(NAME plugin.c_abi
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/c_plugin_test.sh $<TARGET_FILE:cvml_tool>
            ${cvml_plugin_dir}/c ${CMAKE_CURRENT_SOURCE_DIR}/conformance/cases
            ${CMAKE_CURRENT_BINARY_DIR}/c_plugin_test)
  set_tests_properties(plugin.c_abi PROPERTIES TIMEOUT 600)
endif()

add_executable(cvml_plugin_tests ${CMAKE_CURRENT_SOURCE_DIR}/plugins/plugin_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plugins/plugin_conformance_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plugins/plugin_ir_test.cpp)
target_include_directories(cvml_plugin_tests PRIVATE ${PROJECT_SOURCE_DIR}/source
                           ${CMAKE_CURRENT_SOURCE_DIR}/plugins)
target_link_libraries(cvml_plugin_tests PRIVATE cvml_static GTest::gtest GTest::gtest_main)
target_compile_options(cvml_plugin_tests PRIVATE ${CVML_WARNINGS})
target_compile_definitions(cvml_plugin_tests PRIVATE
  CVML_TEST_PLUGIN_DIR="${cvml_plugin_dir}"
  CVML_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
  CVML_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(cvml_plugin_tests cvml_testplugin cvml_testplugin_badabi cvml_testplugin_fail
                 cvml_notaplugin)
if(TARGET cvml_cuda)
  target_compile_definitions(cvml_plugin_tests PRIVATE CVML_CUDA_PLUGIN="$<TARGET_FILE:cvml_cuda>")
  add_dependencies(cvml_plugin_tests cvml_cuda)
endif()
gtest_discover_tests(cvml_plugin_tests DISCOVERY_TIMEOUT 60)

# init → load → run → release → init again leaks nothing and touches nothing freed.
find_program(VALGRIND valgrind)
if(VALGRIND)
  add_test(NAME plugin_valgrind COMMAND ${VALGRIND} --error-exitcode=9 --leak-check=full
           --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:cvml_plugin_tests>
           --gtest_filter=PluginLoader.InitReleaseInitRuns)
  set_tests_properties(plugin_valgrind PROPERTIES LABELS valgrind)
endif()

# The core never links CUDA; the CUDA plugin (when built) links its runtime statically.
find_program(CVML_READELF readelf)
if(CVML_READELF)
  if(TARGET cvml_cuda)
    add_test(NAME cuda_linkage COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_cuda_linkage.sh
             ${CVML_READELF} $<TARGET_FILE:cvml> $<TARGET_FILE:cvml_cuda>)
  else()
    add_test(NAME cuda_linkage COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_cuda_linkage.sh
             ${CVML_READELF} $<TARGET_FILE:cvml>)
  endif()
endif()
