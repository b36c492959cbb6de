# libFuzzer targets (tests/fuzz): the JSON reader, the params reader, the whole load, the
# compiled plan's container.
# Build them with clang in a separate build directory:
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCVML_FUZZ=ON
# or run tests/fuzz/run_fuzz.sh SECONDS, which does that and runs each target.
option(CVML_FUZZ "Build the libFuzzer targets (clang; ASan + UBSan)" OFF)
if(CVML_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CVML_FUZZ needs clang (configure with CC=clang CXX=clang++)")
  endif()
  set(cvml_fuzz_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
  # The library's objects are instrumented for coverage and the sanitizers.
  target_compile_options(cvml_objects PRIVATE ${cvml_fuzz_flags} -fsanitize=fuzzer-no-link)
  # Clang takes 135 s over the avx512 broadcast-mode kernel at -O2 with ASan and UBSan
  # (its segment templates, always inlined and unrolled; 6 s without the sanitizers, or
  # at -O0), the whole fuzz build's critical path. The fuzzed models seldom reach
  # broadcast mode (3x3 convs in whole blocks of 32 output channels); at -O0 the checks
  # are the same, the code only slower.
  set_source_files_properties(
    ${PROJECT_SOURCE_DIR}/source/device/cpu/simd/x86/avx512/conv2d_bcast.cpp
    DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTIES COMPILE_OPTIONS -O0)
  foreach(t json params load plan)
    add_executable(cvml_fuzz_${t} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${t}.cpp)
    target_include_directories(cvml_fuzz_${t} PRIVATE ${PROJECT_SOURCE_DIR}/source
      ${PROJECT_SOURCE_DIR}/api)
    target_compile_options(cvml_fuzz_${t} PRIVATE ${cvml_fuzz_flags} -fsanitize=fuzzer)
    target_link_options(cvml_fuzz_${t} PRIVATE ${cvml_fuzz_flags} -fsanitize=fuzzer)
    target_link_libraries(cvml_fuzz_${t} PRIVATE cvml_static)
    target_compile_definitions(cvml_fuzz_${t} PRIVATE CVML_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  endforeach()
endif()
