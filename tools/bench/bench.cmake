# The benchmark's build pieces beside the `cvml` tool, which compiles tools/bench/*.cpp
# into itself for `cvml bench` (tools/CMakeLists.txt).
set(CVML_BENCH_DIR ${CMAKE_CURRENT_LIST_DIR})
# Regenerates the benchmark models into the build tree (needs the CVM writer).
add_custom_target(bench_models
  COMMAND ${CVML_BENCH_DIR}/make_models.sh ${CMAKE_BINARY_DIR}/bench_models $<TARGET_FILE:cvml_tool>
  DEPENDS cvml_tool VERBATIM)

# Peers for tools/bench/compare.sh, built only where they can be: oneDNN's models of the
# benchmark networks where Debian's libdnnl-dev is installed, the VNNI roofline on x86-64
# with a compiler that knows AVX-512 VNNI, and the cross-CPU probe (what handing cache
# lines between two CPUs costs now) on Linux. Each is tools/NAME in the build tree.
function(cvml_bench_peer target name source)
  add_executable(${target} ${CVML_BENCH_DIR}/peers/${source})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
  target_compile_options(${target} PRIVATE ${CVML_WARNINGS})
  target_link_libraries(${target} PRIVATE ${ARGN})
endfunction()

find_package(dnnl CONFIG QUIET)
find_package(OpenMP QUIET COMPONENTS CXX)
if(dnnl_FOUND AND OpenMP_CXX_FOUND AND NOT CMAKE_CROSSCOMPILING)
  cvml_bench_peer(cvml_dnnl_peer cvml-dnnl-peer dnnl_peer.cpp DNNL::dnnl OpenMP::OpenMP_CXX)
endif()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT WIN32)
  find_package(Threads REQUIRED)
  cvml_bench_peer(cvml_vnni_roof cvml-vnni-roof vnni_roof.c Threads::Threads)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_package(Threads REQUIRED)
  cvml_bench_peer(cvml_xcore_probe cvml-xcore-probe xcore_probe.c Threads::Threads)
endif()
