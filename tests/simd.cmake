# Exactness at every SIMD level and thread count: the unit tests (and the conformance
# runner, when it exists) under CVML_SIMD=scalar|avx2|avx512 and CVML_NUM_THREADS=1|2|3,
# and the benchmark models' output bytes compared across all of them. A level the CPU
# lacks is skipped with a message (the binary reports the level it really used).
set(cvml_simd_levels scalar avx2 avx512)
set(cvml_simd_threads 1 2 3)

# Probes the CPU at test time: prints the best level, used to skip levels it lacks.
add_executable(cvml_simd_probe ${CMAKE_CURRENT_SOURCE_DIR}/simd/probe.c)
target_link_libraries(cvml_simd_probe PRIVATE cvml_static)

foreach(level IN LISTS cvml_simd_levels)
  foreach(t IN LISTS cvml_simd_threads)
    add_test(NAME simd.unit.${level}.t${t}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/simd/run_level.sh $<TARGET_FILE:cvml_simd_probe>
              ${level} $<TARGET_FILE:cvml_unit_tests>)
    set_tests_properties(simd.unit.${level}.t${t} PROPERTIES
      ENVIRONMENT "CVML_SIMD=${level};CVML_NUM_THREADS=${t}" SKIP_RETURN_CODE 77 LABELS simd)
    if(TARGET cvml_conformance_tests)
      add_test(NAME simd.conformance.${level}.t${t}
        COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/simd/run_level.sh $<TARGET_FILE:cvml_simd_probe>
                ${level} $<TARGET_FILE:cvml_conformance_tests>)
      set_tests_properties(simd.conformance.${level}.t${t} PROPERTIES
        ENVIRONMENT "CVML_SIMD=${level};CVML_NUM_THREADS=${t}" SKIP_RETURN_CODE 77 LABELS simd)
    endif()
  endforeach()
endforeach()

add_executable(cvml_simd_identity ${CMAKE_CURRENT_SOURCE_DIR}/simd/identity.cpp
               ${PROJECT_SOURCE_DIR}/tools/bench/models.cpp)
target_include_directories(cvml_simd_identity PRIVATE ${PROJECT_SOURCE_DIR}/tools/bench)
target_compile_options(cvml_simd_identity PRIVATE ${CVML_WARNINGS})
target_link_libraries(cvml_simd_identity PRIVATE cvml_static)
add_test(NAME simd.identity.resnet18 COMMAND cvml_simd_identity resnet18)
add_test(NAME simd.identity.mobilenet_ssd COMMAND cvml_simd_identity mobilenet ssd)
set_tests_properties(simd.identity.resnet18 simd.identity.mobilenet_ssd PROPERTIES
  LABELS simd TIMEOUT 900)
