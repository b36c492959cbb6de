#!/usr/bin/env bash
# GPU check with CMake, a C++ compiler and nvcc only (no GoogleTest, no network).
#   tools/gpu_check.sh [BUILD_DIR]     (relative or absolute; JOBS=N limits the build;
#                                       CVML_CMAKE_ARGS are added to the configure)
#
# 1. Builds libcvml, the CUDA plugin and the cvml tool; libcvml.so must not link CUDA.
# 2. Conformance: every case (and the Cortex model where ../shared has it) on the CUDA
#    device and on the CPU alone, compared byte for byte with each other and with the
#    expected outputs (tests/gpu/gpu_check.cpp). Every island stays on the GPU
#    (CVML_CUDA_ISLAND_WORK=0), so every node with a CUDA kernel must run there.
# 3. Speed: the built-in ResNet-18 and MobileNet-v1 (generated in memory by
#    `cvml bench`, nothing to download) at batch 1 and 64, on the GPU and on the CPU with
#    every core; the output hashes of the two must be equal. Prints one table.
# Exits non-zero on any wrong byte, failed run or failed step: 1 a difference or a
# failed benchmark, 2 the library did not initialise, 3 no CUDA device (the plugin is
# built but not loaded; the reason is printed), or the failing build step's status.
# Without a GPU, the CTest tests cuda_emu.* run step 2 on the plugin's host emulation.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath -m "${1:-build-gpu}")
jobs=${JOBS:-$(nproc)}
shared=${CVML_SHARED:-../shared}

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCVML_BUILD_TESTS=OFF -DCVML_BUILD_TOOLS=ON \
      -DCVML_WITH_CUDA=ON ${CVML_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs" --target cvml cvml_cuda cvml_tool
if readelf -d "$build/libcvml.so" | grep -qi cuda; then
  echo "gpu_check: libcvml.so links a CUDA library" >&2
  exit 1
fi
${CXX:-c++} -O2 -std=c++17 -Wall -Wextra -Iapi tests/gpu/gpu_check.cpp -o "$build/gpu_check" \
  -L"$build" -lcvml -ldl -Wl,-rpath,"$build"
export CVML_PLUGIN_PATH="$build/plugins"

echo "== conformance on the GPU"
cases=()
for c in tests/conformance/cases "$shared/conformance/cases"; do
  if [[ -d $c ]]; then cases+=("$c"); break; fi
done
model=()
[[ -d $shared/models/cifar_resnet20_2019/case ]] && model+=("$shared/models/cifar_resnet20_2019/case")
CVML_CUDA_ISLAND_WORK=0 "$build/gpu_check" --require-cuda source/device/cuda "${cases[@]}" "${model[@]}"
if (( ${#model[@]} > 0 )); then
  "$build/gpu_check" --some-cuda "${model[@]}"
fi

# bench MODEL BATCH RUNS DEVICE_ARGS...: prints "median_ms output_hash", or fails.
bench() {
  local model=$1 batch=$2 runs=$3 json
  shift 3
  if ! json=$("$build/tools/cvml" bench --model "$model" --batch "$batch" --warmup 3 \
                --runs "$runs" --json "$@"); then
    echo "gpu_check: cvml bench --model $model --batch $batch $* failed" >&2
    exit 1
  fi
  local ms hash
  ms=$(sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p' <<<"$json")
  hash=$(sed -n 's/.*"output_hash": "\([0-9a-f]*\)".*/\1/p' <<<"$json")
  if [[ -z $ms || -z $hash ]]; then
    echo "gpu_check: no median or hash in: $json" >&2
    exit 1
  fi
  echo "$ms $hash"
}

echo "== speed: GPU against the CPU ($(nproc) threads), medians"
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
echo "GPU: ${gpu_name:-unknown}; CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
printf '| %-10s | %5s | %10s | %10s | %12s | %12s | %-5s |\n' model batch "GPU ms" "CPU ms" \
  "GPU img/s" "CPU img/s" same
printf '|%s|\n' "------------|-------|------------|------------|--------------|--------------|-------"
status=0
for model in resnet18 mobilenet; do
  for batch in 1 64; do
    runs=50
    (( batch > 1 )) && runs=10
    gpu=$(bench "$model" "$batch" "$runs" --device cuda) || exit 1
    # --device cpu: with the plugin found, a context uses every registered device.
    cpu=$(bench "$model" "$batch" "$(( runs / 5 + 2 ))" --device cpu --threads "$(nproc)") ||
      exit 1
    read -r gpu_ms gpu_hash <<<"$gpu"
    read -r cpu_ms cpu_hash <<<"$cpu"
    same=yes
    if [[ $gpu_hash != "$cpu_hash" ]]; then
      same=NO
      status=1
    fi
    awk -v m="$model" -v b="$batch" -v g="$gpu_ms" -v c="$cpu_ms" -v s="$same" 'BEGIN {
      printf "| %-10s | %5d | %10.3f | %10.3f | %12.0f | %12.0f | %-5s |\n", m, b, g, c,
             b * 1000 / g, b * 1000 / c, s }'
  done
done
if (( status != 0 )); then
  echo "gpu_check: the GPU's output differs from the CPU's (see 'same')" >&2
fi
exit "$status"
