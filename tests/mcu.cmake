# The microcontroller targets (docs/embedded.md). The qemu runs are scripts/test_mcu.sh (a
# step of scripts/test.sh); here what keeps a host change from breaking the Cortex-M
# build: the core's printf formats print right with the Cortex-M toolchain's newlib, and
# libcvml cross-compiles for a Cortex-M55 with -Werror (skipped without the toolchain;
# label mcu, incremental after its first run).
add_test(NAME mcu.portable_formats
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mcu/check_formats.sh ${PROJECT_SOURCE_DIR})
add_test(NAME mcu.cross_build
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mcu/cross_build.sh ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/mcu_cross_m55)
set_tests_properties(mcu.portable_formats mcu.cross_build PROPERTIES LABELS mcu)
# A nested build (every operator, where the Cortex-M step of scripts/test.sh builds
# cifar_resnet20's): scripts/test.sh runs it in the release tree only (label nested_build).
set_tests_properties(mcu.cross_build PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200
  LABELS "mcu;nested_build")
