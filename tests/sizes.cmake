# The size rule (docs/architecture.md, "Layout"): no library or tool function over 150
# lines, no file in source/ or tools/ over 800. The CUDA emulator is one file by design
# (it stands in for the CUDA runtime as a whole); generated files live in the build tree.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME sizes
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_sizes.py
            --exempt-file ${PROJECT_SOURCE_DIR}/source/device/cuda/emu/cuda_emu.cpp
            ${PROJECT_SOURCE_DIR}/source ${PROJECT_SOURCE_DIR}/tools)
else()
  message(STATUS "sizes check: skipped, no Python 3 interpreter")
endif()
