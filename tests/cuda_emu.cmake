# The CUDA plugin's code without a GPU: cvml_cuda_emu (source/device/cuda/emu) is the
# plugin's own .cu sources built by the C++ compiler against a host emulation of CUDA.
#   cuda_emu.runtime_tests  the emulation itself (indices, launch limits, barriers,
#                           shuffles, memory and error rules)
#   cuda_emu.plugin_tests   random graphs of every operator with a CUDA kernel, sizes
#                           past the grid limit, threads, fallbacks: bytes equal to the CPU
#   cuda_emu.conformance    gpu_check over every conformance case: bytes equal to the
#                           CPU's and the expected ones, every node with a CUDA kernel on
#                           "cuda", device memory released, every __global__ kernel run;
#   cuda_emu.conformance.reverse   the same with blocks and threads in reverse order
#   cuda_emu.*.smallgrid    the conformance cases, the real model and the random graphs
#                           on a build whose launches use at most 3 blocks, so every
#                           grid-stride loop goes round many times
#   cuda_emu.conformance.turing    the same (and the real model) on the Turing code
#                           path of the tensor-core kernels (mma m8n8k16, no cp.async)
#   cuda_emu.tensor_cores.* the benchmark's ResNet-18 (every conv2d and the dense on the
#                           int8 tensor-core path, counted) and MobileNet, bytes as the CPU's
#   cuda_emu.model          the real model (../shared), all of it on cuda; skipped when absent
#   cuda_emu.model.placement       the real model with the GPU's own island policy
#   cuda_emu.*.valgrind     the runtime tests and the conformance run under valgrind
# The sanitizer build (CVML_SANITIZE) runs them under ASan + UBSan (all but the device
# tests' repeated runs and the tensors past the grid limit: scripts/test.sh), which see any
# kernel access outside its device allocation: the emulation annotates its fiber
# switches for ASan.
if(NOT TARGET cvml_cuda_emu)
  return()
endif()
set(cvml_emu_plugin_dir ${CMAKE_BINARY_DIR}/plugins/emu)
set(cvml_cuda_src ${PROJECT_SOURCE_DIR}/source/device/cuda)

# The runtime tests link the emulation directly and build their kernels with it.
add_executable(cvml_cuda_emu_runtime_tests ${CMAKE_CURRENT_SOURCE_DIR}/cuda_emu/emu_runtime_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda_emu/emu_graph_test.cpp
  ${cvml_cuda_src}/emu/cuda_emu.cpp ${cvml_cuda_src}/emu/fiber_switch.cpp)
target_include_directories(cvml_cuda_emu_runtime_tests BEFORE PRIVATE ${cvml_cuda_src}/emu)
target_include_directories(cvml_cuda_emu_runtime_tests PRIVATE ${cvml_cuda_src}
  ${PROJECT_SOURCE_DIR}/api ${PROJECT_SOURCE_DIR}/source)
target_link_libraries(cvml_cuda_emu_runtime_tests PRIVATE GTest::gtest GTest::gtest_main)
target_compile_options(cvml_cuda_emu_runtime_tests PRIVATE ${CVML_WARNINGS})
gtest_discover_tests(cvml_cuda_emu_runtime_tests TEST_PREFIX cuda_emu.runtime. DISCOVERY_TIMEOUT 60)

add_executable(cvml_cuda_emu_plugin_tests ${CMAKE_CURRENT_SOURCE_DIR}/cuda_emu/emu_plugin_test.cpp)
target_link_libraries(cvml_cuda_emu_plugin_tests PRIVATE cvml_static GTest::gtest GTest::gtest_main
  ${CMAKE_DL_LIBS})
target_compile_options(cvml_cuda_emu_plugin_tests PRIVATE ${CVML_WARNINGS})
target_include_directories(cvml_cuda_emu_plugin_tests PRIVATE ${cvml_cuda_src}/emu)
target_compile_definitions(cvml_cuda_emu_plugin_tests PRIVATE
  CVML_CUDA_EMU_PLUGIN_DIR="${cvml_emu_plugin_dir}" CVML_CUDA_SRC="${cvml_cuda_src}")
add_dependencies(cvml_cuda_emu_plugin_tests cvml_cuda_emu cvml_cuda_emu_smallgrid)
gtest_discover_tests(cvml_cuda_emu_plugin_tests TEST_PREFIX cuda_emu.plugin. DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 600)

# The benchmark's ResNet-18 and MobileNet on the emulated plugin: bytes equal to the CPU's,
# every conv2d and the dense on the tensor-core path (the emulator counts mma.sync).
add_executable(cvml_cuda_emu_tensor_core_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda_emu/emu_tensor_core_test.cpp
  ${PROJECT_SOURCE_DIR}/tools/bench/models.cpp)
target_include_directories(cvml_cuda_emu_tensor_core_tests PRIVATE ${PROJECT_SOURCE_DIR}/tools/bench)
target_link_libraries(cvml_cuda_emu_tensor_core_tests PRIVATE cvml_static GTest::gtest
  GTest::gtest_main ${CMAKE_DL_LIBS})
target_compile_options(cvml_cuda_emu_tensor_core_tests PRIVATE ${CVML_WARNINGS})
target_compile_definitions(cvml_cuda_emu_tensor_core_tests PRIVATE
  CVML_CUDA_EMU_PLUGIN_DIR="${cvml_emu_plugin_dir}")
add_dependencies(cvml_cuda_emu_tensor_core_tests cvml_cuda_emu)
# Whole networks on the emulated device: 5 s in the release build, 35 s under ASan.
gtest_discover_tests(cvml_cuda_emu_tensor_core_tests TEST_PREFIX cuda_emu.tensor_cores.
  DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)

# gpu_check as tools/gpu_check.sh builds it for a GPU: only the C API.
add_executable(cvml_gpu_check ${CMAKE_CURRENT_SOURCE_DIR}/gpu/gpu_check.cpp)
target_link_libraries(cvml_gpu_check PRIVATE cvml ${CMAKE_DL_LIBS})
target_compile_options(cvml_gpu_check PRIVATE ${CVML_WARNINGS})
add_dependencies(cvml_gpu_check cvml_cuda_emu cvml_cuda_emu_smallgrid cvml_cuda_emu_turing)

set(cvml_emu_env CVML_PLUGIN_PATH=${cvml_emu_plugin_dir} CVML_CUDA_ISLAND_WORK=0)
set(cvml_model_case ${PROJECT_SOURCE_DIR}/../shared/models/cifar_resnet20_2019/case)
add_test(NAME cuda_emu.conformance COMMAND cvml_gpu_check --require-cuda ${cvml_cuda_src}
         --kernel-coverage ${CMAKE_CURRENT_SOURCE_DIR}/conformance/cases)
add_test(NAME cuda_emu.conformance.reverse COMMAND cvml_gpu_check --require-cuda ${cvml_cuda_src}
         ${CMAKE_CURRENT_SOURCE_DIR}/conformance/cases)
add_test(NAME cuda_emu.conformance.smallgrid COMMAND cvml_gpu_check --require-cuda ${cvml_cuda_src}
         --kernel-coverage ${CMAKE_CURRENT_SOURCE_DIR}/conformance/cases ${cvml_model_case})
set_tests_properties(cuda_emu.conformance.smallgrid PROPERTIES ENVIRONMENT
  "CVML_PLUGIN_PATH=${CMAKE_BINARY_DIR}/plugins/emu-smallgrid;CVML_CUDA_ISLAND_WORK=0")
add_test(NAME cuda_emu.conformance.turing COMMAND cvml_gpu_check --require-cuda ${cvml_cuda_src}
         ${CMAKE_CURRENT_SOURCE_DIR}/conformance/cases)
add_test(NAME cuda_emu.model.turing COMMAND cvml_gpu_check --require-cuda ${cvml_cuda_src}
         ${cvml_model_case})
set_tests_properties(cuda_emu.conformance.turing cuda_emu.model.turing PROPERTIES ENVIRONMENT
  "CVML_PLUGIN_PATH=${CMAKE_BINARY_DIR}/plugins/emu-turing;CVML_CUDA_ISLAND_WORK=0")
add_test(NAME cuda_emu.plugin.smallgrid COMMAND cvml_cuda_emu_plugin_tests
         --gtest_filter=-*PastTheGridLimit*)
set_tests_properties(cuda_emu.plugin.smallgrid PROPERTIES TIMEOUT 600 ENVIRONMENT
  "CVML_CUDA_EMU_PLUGIN_DIR=${CMAKE_BINARY_DIR}/plugins/emu-smallgrid")
add_test(NAME cuda_emu.model COMMAND cvml_gpu_check --require-cuda ${cvml_cuda_src} ${cvml_model_case})
add_test(NAME cuda_emu.model.placement COMMAND cvml_gpu_check --some-cuda ${cvml_model_case})
set_tests_properties(cuda_emu.conformance cuda_emu.model PROPERTIES ENVIRONMENT "${cvml_emu_env}")
set_tests_properties(cuda_emu.conformance.reverse PROPERTIES
  ENVIRONMENT "${cvml_emu_env};CVML_CUDA_EMU_ORDER=reverse")
set_tests_properties(cuda_emu.model.placement PROPERTIES
  ENVIRONMENT "CVML_PLUGIN_PATH=${cvml_emu_plugin_dir}")
# gpu_check exits 77 when the model directory is absent.
set_tests_properties(cuda_emu.model cuda_emu.model.placement PROPERTIES SKIP_RETURN_CODE 77)

# The fiber engine and the plugin's device code under valgrind: no invalid access, no
# uninitialised use, no leak (the emulation registers its fiber stacks with valgrind).
find_program(VALGRIND valgrind)
if(VALGRIND)
  set(cvml_vg ${VALGRIND} --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect -q)
  add_test(NAME cuda_emu.runtime.valgrind COMMAND ${cvml_vg} $<TARGET_FILE:cvml_cuda_emu_runtime_tests>)
  add_test(NAME cuda_emu.conformance.valgrind COMMAND ${cvml_vg} $<TARGET_FILE:cvml_gpu_check>
           --require-cuda ${cvml_cuda_src} ${CMAKE_CURRENT_SOURCE_DIR}/conformance/cases)
  set_tests_properties(cuda_emu.conformance.valgrind PROPERTIES ENVIRONMENT "${cvml_emu_env}")
  set_tests_properties(cuda_emu.runtime.valgrind cuda_emu.conformance.valgrind PROPERTIES
    LABELS valgrind TIMEOUT 900)
endif()

# The CUDA device's run-time behaviour (graphs, staging, host waits, devices, profile,
# memory) on the benchmark's ResNet-18 built in memory (tools/bench/models.cpp).
add_executable(cvml_cuda_emu_device_tests ${CMAKE_CURRENT_SOURCE_DIR}/cuda_emu/emu_device_test.cpp
  ${PROJECT_SOURCE_DIR}/tools/bench/models.cpp)
target_include_directories(cvml_cuda_emu_device_tests PRIVATE ${cvml_cuda_src}/emu
  ${PROJECT_SOURCE_DIR}/tools/bench)
target_link_libraries(cvml_cuda_emu_device_tests PRIVATE cvml_static GTest::gtest GTest::gtest_main
  ${CMAKE_DL_LIBS})
target_compile_options(cvml_cuda_emu_device_tests PRIVATE ${CVML_WARNINGS})
target_compile_definitions(cvml_cuda_emu_device_tests PRIVATE
  CVML_CUDA_EMU_PLUGIN_DIR="${cvml_emu_plugin_dir}")
add_dependencies(cvml_cuda_emu_device_tests cvml_cuda_emu)
# Each test runs ResNet-18 several times on the CPU and on the emulated GPU: 45 s in all
# in the release build, 300 s under ASan (most of it the CPU's runs at -O0), so the
# sanitizer step of scripts/test.sh leaves them to the release build (label
# emu_repeated_runs); the kernels and device code they run are covered there by the
# other cuda_emu tests, whole networks included.
gtest_discover_tests(cvml_cuda_emu_device_tests TEST_PREFIX cuda_emu.device. DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 600 LABELS emu_repeated_runs)

# Fusion agreement: for every conformance case and benchmark model, each tail the CUDA
# device fuses is the CPU's tail of that head (both call the core's fusion walk).
add_executable(cvml_cuda_emu_fusion_tests ${CMAKE_CURRENT_SOURCE_DIR}/cuda_emu/emu_fusion_test.cpp
  ${PROJECT_SOURCE_DIR}/tools/bench/models.cpp)
target_include_directories(cvml_cuda_emu_fusion_tests PRIVATE ${PROJECT_SOURCE_DIR}/tools/bench)
target_link_libraries(cvml_cuda_emu_fusion_tests PRIVATE cvml_static GTest::gtest GTest::gtest_main
  ${CMAKE_DL_LIBS})
target_compile_options(cvml_cuda_emu_fusion_tests PRIVATE ${CVML_WARNINGS})
target_compile_definitions(cvml_cuda_emu_fusion_tests PRIVATE
  CVML_CUDA_EMU_PLUGIN_DIR="${cvml_emu_plugin_dir}"
  CVML_CONFORMANCE_CASES="${CMAKE_CURRENT_SOURCE_DIR}/conformance/cases")
add_dependencies(cvml_cuda_emu_fusion_tests cvml_cuda_emu)
gtest_discover_tests(cvml_cuda_emu_fusion_tests TEST_PREFIX cuda_emu.fusion. DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 600)
