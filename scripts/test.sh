#!/usr/bin/env bash
# Builds cvm-lite and runs the whole test suite:
#   1. the release build (with the CUDA plugin when nvcc is present) and all its tests,
#   2. an ASan + UBSan build and all its tests, and a ThreadSanitizer build of the
#      shared-handle stress test,
#   3. the libFuzzer targets for a fixed time each, when clang is present,
#   4. the embedded profile (CVML_MINIMAL: CPU device and CVM serializer only, no
#      threads; built without the x86 SIMD kernels, as on a microcontroller) and its tests,
#   5. the Cortex-M cross build, run under qemu-system-arm on an emulated Cortex-M55,
#      Cortex-M7 and Cortex-M4F, and the smallest (scalar-only) Cortex-M55 image within
#      its 48 KB code budget (scripts/test_mcu.sh, docs/embedded.md),
#   6. the Windows build (MinGW-w64) and its tests under Wine (scripts/test_windows.sh),
#   7. the aarch64 Linux build and its tests under qemu-aarch64 at every aarch64 SIMD
#      level (scripts/test_arm.sh),
#   8. the README's first command, scripts/run_example.sh, as a new user runs it (its
#      own build of the tool, the bundled model, the output checked).
# Installs missing Debian packages first (scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
fuzz_seconds=${CVML_FUZZ_SECONDS:-30}

scripts/install_deps.sh

# Each step prints how long the one before it took, so a slow CI run shows where its
# time went.
step_start=$SECONDS
step() {
  printf '\n==== (previous step %d s, %d s in all) %s\n' $((SECONDS - step_start)) "$SECONDS" "$*"
  step_start=$SECONDS
}

step "release build"
# Without an NVIDIA GPU the CUDA plugin is built and its tests run on the emulator, so
# machine code for sm_75 and sm_80 alone, the two sides of the plugin's one architecture
# test (mma.cuh's __CUDA_ARCH__ < 800): a third of the compile time of the shipped list
# (source/device/cuda/CMakeLists.txt), which a machine with a GPU builds.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  cuda_archs=(-UCMAKE_CUDA_ARCHITECTURES)
else
  cuda_archs=("-DCMAKE_CUDA_ARCHITECTURES=75-real;80-real")
fi
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release "${cuda_archs[@]}" >/dev/null
cmake --build build/release -j"$jobs"

step "sanitizer build (ASan + UBSan)"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DCVML_SANITIZE=ON -DCVML_WITH_CUDA=OFF >/dev/null
cmake --build build/asan -j"$jobs"

if [[ -x tests/fuzz/run_fuzz.sh ]] && command -v clang++ >/dev/null 2>&1; then
  step "fuzzing, ${fuzz_seconds}s per target"
  JOBS="$jobs" tests/fuzz/run_fuzz.sh "$fuzz_seconds"
else
  step "fuzzing skipped: clang++ not found"
fi

step "tests under ASan + UBSan (valgrind runs, the per-SIMD-level repeats, the emulated GPU's repeated-run device tests and the nested plain builds are left to the release build)"
# Tensors past the CUDA grid limit are volume, not code paths (100 s under ASan): they
# are left to the release build as well.
asan_release_only='TensorsPastTheGridLimit'
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/asan --output-on-failure -j"$jobs" \
  -LE "valgrind|simd|emu_repeated_runs|nested_build" -E "$asan_release_only"

step "ThreadSanitizer: one cifar_resnet20 net shared by 8 threads, CVML_NUM_THREADS 1 and 2"
# Only the library and the shared-handle stress test (tests/hostile/shared_handle.cpp).
tsan=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCVML_WITH_CUDA=OFF -DCVML_BUILD_TOOLS=OFF
      "-DCMAKE_C_FLAGS=-fsanitize=thread" "-DCMAKE_CXX_FLAGS=-fsanitize=thread"
      "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread")
cmake -S . -B build/tsan "${tsan[@]}" >/dev/null
cmake --build build/tsan -j"$jobs" --target cvml_shared_handle
for n in 1 2; do
  TSAN_OPTIONS="halt_on_error=1 exitcode=66" CVML_NUM_THREADS=$n \
    build/tsan/tests/cvml_shared_handle ../shared/models/cifar_resnet20_2019/case 8 100 ||
    [[ $? -eq 77 ]]
done

step "tests of the release build"
ctest --test-dir build/release --output-on-failure -j"$jobs"

step "embedded profile (CVML_MINIMAL, no SIMD kernels, no threads): build and tests"
cmake -S . -B build/minimal -DCMAKE_BUILD_TYPE=Release -DCVML_MINIMAL=ON -DCVML_WITH_SIMD=OFF >/dev/null
cmake --build build/minimal -j"$jobs"
# Every SIMD level is the scalar one here, so the per-level repeats add nothing; the
# converter's tests (Python, on the shared library) ran against the release build.
ctest --test-dir build/minimal --output-on-failure -j"$jobs" -LE "valgrind|simd|convert|nested_build"

step "Cortex-M55, M7 and M4F under qemu (cross build, models in flash): scripts/test_mcu.sh"
# Every model also runs from its compiled plan, in 64 KB of RAM at most, with at most
# 48 KB of libcvml code (docs/embedded.md, "A compiled plan in flash").
CVML_MCU_COMPILED_RAM_BUDGET=65536 CVML_MCU_COMPILED_TEXT_BUDGET=49152 JOBS="$jobs" \
  scripts/test_mcu.sh
# The smallest images: the scalar level only, whose libcvml code must stay within 48 KB
# for cifar_resnet20's operators from the CVM files, 40 KB from the compiled plan.
CVML_MCU_BOARDS=mps3-an547 CVML_MCU_WITH_SIMD=OFF CVML_MCU_TEXT_BUDGET=49152 \
  CVML_MCU_COMPILED_RAM_BUDGET=65536 CVML_MCU_COMPILED_TEXT_BUDGET=40960 JOBS="$jobs" \
  scripts/test_mcu.sh

step "Windows (MinGW-w64 cross build, tests under Wine): scripts/test_windows.sh"
JOBS="$jobs" scripts/test_windows.sh

step "aarch64 (cross build, tests under qemu-aarch64 at every level): scripts/test_arm.sh"
JOBS="$jobs" scripts/test_arm.sh

step "the README's example command: scripts/run_example.sh"
JOBS="$jobs" scripts/run_example.sh
step "done"
