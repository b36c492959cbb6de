# Every heap allocation of the core goes through its allocator (cvml_set_allocator).
add_test(NAME memory.no_direct_malloc
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/memory/no_direct_malloc.sh ${CMAKE_NM} $<TARGET_FILE:cvml_static>)
set_tests_properties(memory.no_direct_malloc PROPERTIES LABELS memory)

# RAM a model needs, measured on the host (tests/memory/memory_budget.cpp): every heap
# allocation counted by interposing glibc's allocator, the stack high-water from a
# painted stack, the arena the graph reports. Interposition cannot run under the
# sanitizers (they own malloc), so there the tests are not built.
if(NOT CVML_SANITIZE AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(cvml_memory_budget ${CMAKE_CURRENT_SOURCE_DIR}/memory/memory_budget.cpp)
  target_include_directories(cvml_memory_budget PRIVATE ${PROJECT_SOURCE_DIR}/api)
  target_compile_options(cvml_memory_budget PRIVATE ${CVML_WARNINGS})
  target_link_libraries(cvml_memory_budget PRIVATE cvml_static)
  set(cvml_memory_model ${PROJECT_SOURCE_DIR}/../shared/models/cifar_resnet20_2019/case)
  set(cvml_memory_gas 137396206)
  # The library's defaults (its own arena, params copied): figures only, at each level.
  foreach(level IN ITEMS scalar avx2 avx512)
    add_test(NAME memory.cifar_resnet20.default.${level}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/simd/run_level.sh $<TARGET_FILE:cvml_simd_probe>
              ${level} $<TARGET_FILE:cvml_memory_budget> ${cvml_memory_model} --gas ${cvml_memory_gas})
    set_tests_properties(memory.cifar_resnet20.default.${level} PROPERTIES
      ENVIRONMENT "CVML_SIMD=${level}" SKIP_RETURN_CODE 77 LABELS memory)
    # Weights read in place from the caller's buffer and the caller's arena: the same
    # bytes and gas, and no allocation after the load, at every level and thread count.
    foreach(t IN ITEMS 1 2)
      set(name memory.cifar_resnet20.in_place_arena.${level}.t${t})
      add_test(NAME ${name}
        COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/simd/run_level.sh $<TARGET_FILE:cvml_simd_probe>
                ${level} $<TARGET_FILE:cvml_memory_budget> ${cvml_memory_model} --gas ${cvml_memory_gas}
                --threads ${t} --in-place --arena --no-alloc-after-load)
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "CVML_SIMD=${level}" SKIP_RETURN_CODE 77 LABELS memory)
    endforeach()
    # No heap at all: the library's memory from the caller's pool (cvml_set_allocator),
    # and not one call of the C library's allocator during the load and run.
    set(name memory.cifar_resnet20.pool_heap.${level})
    add_test(NAME ${name}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/simd/run_level.sh $<TARGET_FILE:cvml_simd_probe>
              ${level} $<TARGET_FILE:cvml_memory_budget> ${cvml_memory_model} --gas ${cvml_memory_gas}
              --threads 2 --in-place --arena --no-alloc-after-load --pool 33554432)
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "CVML_SIMD=${level}" SKIP_RETURN_CODE 77 LABELS memory)
  endforeach()
endif()
