# Cross-compiles cvm-lite for 64-bit Windows with Debian's MinGW-w64 (posix threads):
#   cmake -S . -B build/windows -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain/mingw-w64-x86_64.cmake
# Tests and tools run under Wine, found here as the cross-compiling emulator.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

# The posix flavour: std::thread and std::mutex need winpthreads, which the win32
# flavour of Debian's MinGW-w64 does not provide.
set(CVML_MINGW_PREFIX x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${CVML_MINGW_PREFIX}-gcc-posix)
set(CMAKE_CXX_COMPILER ${CVML_MINGW_PREFIX}-g++-posix)
set(CMAKE_RC_COMPILER ${CVML_MINGW_PREFIX}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${CVML_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Link the GCC runtime and winpthreads statically, so cvml.dll, cvml.exe and the tests
# need no MinGW DLLs beside them (a Windows user gets one file that runs).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static")

find_program(CVML_WINE NAMES wine wine64 PATHS /usr/lib/wine)
if(CVML_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CVML_WINE})
endif()
