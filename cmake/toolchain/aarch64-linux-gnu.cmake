# Cross-compiles cvm-lite for 64-bit ARM Linux (Cortex-A) with Debian's GNU toolchain:
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain/aarch64-linux-gnu.cmake
# Tests and tools run under qemu-aarch64 (user mode), found here as the cross-compiling
# emulator; QEMU_CPU picks the emulated core, and with it the SIMD levels the library
# detects (scripts/test_arm.sh, tests/arm/arm_tests.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CVML_AARCH64_PREFIX aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${CVML_AARCH64_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${CVML_AARCH64_PREFIX}-g++)

set(CVML_AARCH64_SYSROOT /usr/${CVML_AARCH64_PREFIX})
set(CMAKE_FIND_ROOT_PATH ${CVML_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -L: where qemu finds the target's dynamic loader and C/C++ runtime.
find_program(CVML_QEMU_AARCH64 qemu-aarch64)
if(CVML_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CVML_QEMU_AARCH64} -L ${CVML_AARCH64_SYSROOT})
endif()
