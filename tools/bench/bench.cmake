# The benchmark's build pieces beside the `cvml` tool, which compiles tools/bench/*.cpp
# into itself for `cvml bench` (tools/CMakeLists.txt).
set(CVML_BENCH_DIR ${CMAKE_CURRENT_LIST_DIR})
# Regenerates the benchmark models into the build tree (needs the CVM writer).
add_custom_target(bench_models
  COMMAND ${CVML_BENCH_DIR}/make_models.sh ${CMAKE_BINARY_DIR}/bench_models $<TARGET_FILE:cvml_tool>
  DEPENDS cvml_tool VERBATIM)

# Peers for tools/bench/compare.sh, built only where they can be: oneDNN's models of the
# benchmark networks where Debian's libdnnl-dev is installed, and the VNNI roofline on
# x86-64 with a compiler that knows AVX-512 VNNI.
find_package(dnnl CONFIG QUIET)
find_package(OpenMP QUIET COMPONENTS CXX)
if(dnnl_FOUND AND OpenMP_CXX_FOUND AND NOT CMAKE_CROSSCOMPILING)
  add_executable(cvml_dnnl_peer ${CVML_BENCH_DIR}/peers/dnnl_peer.cpp)
  set_target_properties(cvml_dnnl_peer PROPERTIES OUTPUT_NAME cvml-dnnl-peer
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
  target_compile_options(cvml_dnnl_peer PRIVATE ${CVML_WARNINGS})
  target_link_libraries(cvml_dnnl_peer PRIVATE DNNL::dnnl OpenMP::OpenMP_CXX)
endif()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT WIN32)
  find_package(Threads REQUIRED)
  add_executable(cvml_vnni_roof ${CVML_BENCH_DIR}/peers/vnni_roof.c)
  set_target_properties(cvml_vnni_roof PROPERTIES OUTPUT_NAME cvml-vnni-roof
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
  target_compile_options(cvml_vnni_roof PRIVATE ${CVML_WARNINGS})
  target_link_libraries(cvml_vnni_roof PRIVATE Threads::Threads)
endif()
# The cross-CPU probe (what handing cache lines between two CPUs costs now) on Linux.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_package(Threads REQUIRED)
  add_executable(cvml_xcore_probe ${CVML_BENCH_DIR}/peers/xcore_probe.c)
  set_target_properties(cvml_xcore_probe PROPERTIES OUTPUT_NAME cvml-xcore-probe
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
  target_compile_options(cvml_xcore_probe PRIVATE ${CVML_WARNINGS})
  target_link_libraries(cvml_xcore_probe PRIVATE Threads::Threads)
endif()
