#!/usr/bin/env bash
# GPU check with CMake, a C++ compiler and nvcc only (no GoogleTest, no network):
# builds libcvml and the CUDA plugin, builds tests/gpu/gpu_check.cpp against them, and
# runs every conformance case and the real model on the CUDA device, comparing bytes
# with the CPU and the expected outputs; times ResNet-18-shaped models when present.
# The cases run with every island kept on the GPU (CVML_CUDA_ISLAND_WORK=0), so every
# node with a CUDA kernel must run there; the real model and the timings then run
# with the plugin's own island policy. (Without a GPU, the CTest tests cuda_emu.* run
# the same check on the plugin's host emulation.)
#   tools/gpu_check.sh [BUILD_DIR]      (JOBS=N limits the build's parallelism)
# Exit status: gpu_check's (0 all equal, 1 a difference, 2 init failed, 3 no CUDA
# device: the plugin is built but not loaded, the reason is printed), or the failing
# build step's; 1 as well when libcvml.so links a CUDA library.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
jobs=${JOBS:-$(nproc)}
shared=../shared

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCVML_BUILD_TESTS=OFF -DCVML_BUILD_TOOLS=OFF \
      -DCVML_WITH_CUDA=ON >/dev/null
cmake --build "$build" -j"$jobs" --target cvml cvml_cuda
if readelf -d "$build/libcvml.so" | grep -qi cuda; then
  echo "gpu_check: libcvml.so links a CUDA library" >&2
  exit 1
fi
${CXX:-c++} -O2 -std=c++17 -Wall -Wextra -Iapi tests/gpu/gpu_check.cpp -o "$build/gpu_check" \
  -L"$build" -lcvml -ldl -Wl,-rpath,"$PWD/$build"

cases=()
for c in tests/conformance/cases "$shared/conformance/cases"; do
  if [[ -d $c ]]; then cases+=("$c"); break; fi
done
model=()
[[ -d $shared/models/cifar_resnet20_2019/case ]] && model+=("$shared/models/cifar_resnet20_2019/case")
benches=()
for m in "$shared"/models/resnet18*; do
  [[ -f $m/model.json && -f $m/input.bin ]] && benches+=(--bench "$m")
done
check() { CVML_PLUGIN_PATH="$PWD/$build/plugins" "$build/gpu_check" "$@"; }
CVML_CUDA_ISLAND_WORK=0 check --require-cuda source/device/cuda "${cases[@]}" "${model[@]}"
if (( ${#model[@]} + ${#benches[@]} > 0 )); then
  check --some-cuda "${benches[@]}" "${model[@]}"
fi
