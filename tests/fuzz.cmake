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
