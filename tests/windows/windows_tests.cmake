# The tests of the Windows build (MinGW-w64), run under Wine by ctest through
# CMAKE_CROSSCOMPILING_EMULATOR (the toolchain file finds it). Each test binary runs as
# one Windows process (a Wine start costs about a second, so GoogleTest cases are not
# discovered one by one): the unit tests once, the conformance runner at every SIMD level
# the CPU has, and the C examples linked against cvml.dll.
set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
set(cvml_cross_test_options -include ${CMAKE_CURRENT_SOURCE_DIR}/windows/posix_shim.h)
include(cross/gtest_programs.cmake)

if(CMAKE_CROSSCOMPILING_EMULATOR)
  set(cvml_emulator ${CMAKE_CROSSCOMPILING_EMULATOR})
else()
  set(cvml_emulator "")  # a real Windows host
endif()
# A Wine prefix of the build's own, so tests neither need nor touch the user's ~/.wine.
set(cvml_test_env "WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix;WINEDEBUG=-all"
    "CVML_TEST_EMULATOR=${cvml_emulator}")

add_executable(cvml_simd_probe ${CMAKE_CURRENT_SOURCE_DIR}/simd/probe.c)
target_compile_options(cvml_simd_probe PRIVATE -include ${CMAKE_CURRENT_SOURCE_DIR}/windows/posix_shim.h)
target_link_libraries(cvml_simd_probe PRIVATE cvml_static)

add_test(NAME windows.unit COMMAND cvml_unit_tests)
set_tests_properties(windows.unit PROPERTIES ENVIRONMENT "${cvml_test_env}" TIMEOUT 1200)
foreach(level scalar avx2 avx512)
  add_test(NAME windows.conformance.${level}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/simd/run_level.sh $<TARGET_FILE:cvml_simd_probe>
            ${level} $<TARGET_FILE:cvml_conformance_tests>)
  set_tests_properties(windows.conformance.${level} PROPERTIES
    ENVIRONMENT "${cvml_test_env};CVML_SIMD=${level};CVML_NUM_THREADS=2" SKIP_RETURN_CODE 77
    TIMEOUT 900)
endforeach()

# One cifar_resnet20 net shared by 8 threads (tests/hostile/shared_handle.cpp), as on
# Linux: its lock is a winpthreads mutex, whose static initializer is not zero, so the
# handle's lock must be made by graph_lock_init. Exit 77 (skipped) without ../shared.
if(CVML_WITH_THREADS)
  find_package(Threads REQUIRED)
  include(${CMAKE_CURRENT_SOURCE_DIR}/hostile/shared_handle.cmake)
  cvml_add_shared_handle_tests(windows 900 ${cvml_test_env})
endif()

# The C examples through cvml.dll: Wine finds the DLL through WINEPATH.
foreach(ex load_and_run upstream_api)
  if(TARGET example_${ex})
    add_test(NAME windows.examples.${ex}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/run_example.sh $<TARGET_FILE:example_${ex}>
              ${PROJECT_SOURCE_DIR})
    set_tests_properties(windows.examples.${ex} PROPERTIES
      ENVIRONMENT "${cvml_test_env};WINEPATH=$<TARGET_FILE_DIR:cvml>")
  endif()
endforeach()
if(TARGET example_build_and_run)
  add_test(NAME windows.examples.build_and_run COMMAND example_build_and_run)
  set_tests_properties(windows.examples.build_and_run PROPERTIES
    ENVIRONMENT "${cvml_test_env};WINEPATH=$<TARGET_FILE_DIR:cvml>")
endif()

# The C99 test plugin (tests/plugins/c_plugin.c) as DLLs, loaded with LoadLibrary by
# scripts/test_windows.sh through cvml.exe: it links nothing of the library, everything
# comes through the host table. The variant declaring the next ABI major version also
# has a DllMain that ends the process: loading it must refuse it without running it.
function(cvml_windows_c_plugin name dir)
  add_library(${name} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/c_plugin.c ${ARGN})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/api)
  set_target_properties(${name} PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF PREFIX ""
    OUTPUT_NAME ${name} LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/plugins/${dir})
  target_compile_options(${name} PRIVATE -Wall -Wextra -pedantic -Werror)
endfunction()
cvml_windows_c_plugin(cvml_cplugin good)
cvml_windows_c_plugin(cvml_cplugin_next bad ${CMAKE_CURRENT_SOURCE_DIR}/windows/dllmain_exits.c)
target_compile_definitions(cvml_cplugin_next PRIVATE CPLUGIN_NEXT_MAJOR)
