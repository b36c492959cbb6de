# The x86 instruction counts: cvm-lite's instructions per MAC at avx2 under qemu-x86_64
# (tools/bench/count_x86.sh --check), bounded there, so that a change that makes the
# kernels run more instructions fails here rather than showing only in timings on a
# shared machine. Release build on x86-64 only (label simd: the sanitizer and embedded
# builds leave it out).
find_program(CVML_QEMU_X86 qemu-x86_64)
if(CVML_QEMU_X86 AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$" AND TARGET cvml_tool
   AND CVML_WITH_SIMD)
  add_test(NAME bench.x86_instructions
    COMMAND ${PROJECT_SOURCE_DIR}/tools/bench/count_x86.sh --check ${CMAKE_BINARY_DIR})
  set_tests_properties(bench.x86_instructions PROPERTIES TIMEOUT 600 LABELS simd)
else()
  message(STATUS "x86 instruction counts: not tested (needs qemu-x86_64, an x86-64 host "
                 "build with the SIMD kernels)")
endif()
