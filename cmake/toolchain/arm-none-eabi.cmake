# Bare-metal Arm Cortex-M with arm-none-eabi-gcc and newlib (Debian/Ubuntu:
# gcc-arm-none-eabi, libnewlib-arm-none-eabi). Not used directly: the per-core files
# (cortex-m4f.cmake, cortex-m7.cmake, cortex-m55.cmake) set CVML_MCU_CPU_FLAGS and
# include this one.
#
#   cmake -S . -B build/m55 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain/cortex-m55.cmake
#
# The target has no operating system: CMake builds the embedded profile
# (CVML_MINIMAL: no threads, plugins, shared library, tools or tests) and only the
# static library. Programs link it with their own startup code and linker script
# (see tests/mcu/ and docs/embedded.md).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CVML_MCU_TOOLCHAIN_PREFIX "arm-none-eabi-" CACHE STRING "Cross tool prefix")
set(CMAKE_C_COMPILER ${CVML_MCU_TOOLCHAIN_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${CVML_MCU_TOOLCHAIN_PREFIX}g++)
set(CMAKE_ASM_COMPILER ${CVML_MCU_TOOLCHAIN_PREFIX}gcc)
set(CMAKE_AR ${CVML_MCU_TOOLCHAIN_PREFIX}ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${CVML_MCU_TOOLCHAIN_PREFIX}ranlib CACHE FILEPATH "")
set(CMAKE_SIZE ${CVML_MCU_TOOLCHAIN_PREFIX}size CACHE FILEPATH "")

# No startup code or linker script at configure time: test compilers with a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Sections per function and object so the final link drops what a model does not use.
set(CMAKE_C_FLAGS_INIT "${CVML_MCU_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${CVML_MCU_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${CVML_MCU_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${CVML_MCU_CPU_FLAGS} -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
