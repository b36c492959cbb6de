# Cortex-M7 with the double-precision FPU (hard-float ABI), e.g. qemu's mps2-an500.
# See arm-none-eabi.cmake.
set(CVML_MCU_CPU_FLAGS "-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
