# The microcontroller targets (docs/embedded.md). The cross build and the qemu runs are
# scripts/test_mcu.sh (a step of scripts/test.sh); here only what a host can check fast:
# the core's printf formats print right with the Cortex-M toolchain's newlib.
add_test(NAME mcu.portable_formats
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mcu/check_formats.sh ${PROJECT_SOURCE_DIR})
