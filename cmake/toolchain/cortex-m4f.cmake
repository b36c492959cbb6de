# Cortex-M4 with the single-precision FPU (hard-float ABI). See arm-none-eabi.cmake.
set(CVML_MCU_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
