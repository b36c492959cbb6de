# The tests of the aarch64 cross build, run under qemu-aarch64 by ctest through
# CMAKE_CROSSCOMPILING_EMULATOR (cmake/toolchain/aarch64-linux-gnu.cmake finds it). Each
# SIMD level runs on an emulated core (QEMU_CPU) that has it and nothing above it, so the
# level the library detects by itself is the one under test, and the probe proves it.
# The unit tests and the conformance runner run whole (one process each: GoogleTest cases
# are not discovered one by one, which would start qemu once per case).
include(cross/gtest_programs.cmake)

add_executable(cvml_simd_probe ${CMAKE_CURRENT_SOURCE_DIR}/simd/probe.c)
target_link_libraries(cvml_simd_probe PRIVATE cvml_static)

# level -> the emulated core whose best level it is (qemu 7.2: the Cortex-A72 has NEON
# and no dot product, the Neoverse N1 the dot product and no I8MM, qemu's "max" core
# I8MM). The scalar level runs on the A72 with CVML_SIMD lowering it.
set(cvml_arm_levels scalar neon dotprod i8mm)
set(cvml_arm_cpu_scalar cortex-a72)
set(cvml_arm_cpu_neon cortex-a72)
set(cvml_arm_cpu_dotprod neoverse-n1)
set(cvml_arm_cpu_i8mm max)
# Wall-clock bounds mean nothing under an emulator many times slower than the host:
# those tests run in the native builds only.
set(cvml_arm_gtest_filter --gtest_filter=-MemoryPlan.HostileShapesPlanFast)
foreach(level IN LISTS cvml_arm_levels)
  set(cpu ${cvml_arm_cpu_${level}})
  if(NOT level STREQUAL "scalar")
    # The core's best level is detected as this one (the hardware capabilities).
    add_test(NAME arm.detect.${level}
      COMMAND ${CMAKE_COMMAND} -E env QEMU_CPU=${cpu} --unset=CVML_SIMD
              ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:cvml_simd_probe>)
    set_tests_properties(arm.detect.${level} PROPERTIES PASS_REGULAR_EXPRESSION "^${level}\n$"
      LABELS arm)
  endif()
  # Both suites run on 2 threads, so the thread pool's hand-off runs on the aarch64 code
  # too (under qemu it once lost a wake-up: see announce() in thread_pool.cpp).
  foreach(suite unit conformance)
    set(env QEMU_CPU=${cpu} CVML_SIMD=${level} CVML_NUM_THREADS=2)
    add_test(NAME arm.${suite}.${level}
      COMMAND ${CMAKE_COMMAND} -E env ${env} ${CMAKE_CROSSCOMPILING_EMULATOR}
              $<TARGET_FILE:cvml_${suite}_tests> ${cvml_arm_gtest_filter})
    set_tests_properties(arm.${suite}.${level} PROPERTIES TIMEOUT 600 LABELS arm)
  endforeach()
endforeach()

# Writes the single-layer models of the Cortex-M per-layer counts (scripts/test_arm.sh
# runs it under qemu-aarch64; tests/arm/mcu/layer_models.cpp).
add_executable(cvml_layer_models ${CMAKE_CURRENT_SOURCE_DIR}/arm/mcu/layer_models.cpp)
target_include_directories(cvml_layer_models PRIVATE ${PROJECT_SOURCE_DIR}/api)
target_link_libraries(cvml_layer_models PRIVATE cvml_static)
target_compile_options(cvml_layer_models PRIVATE ${CVML_WARNINGS})
