# Cortex-M55 (Armv8.1-M with Helium/MVE and FPU, hard-float ABI), e.g. qemu's
# mps3-an547. See arm-none-eabi.cmake.
set(CVML_MCU_CPU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
