#!/usr/bin/env bash
# Cross-builds cvm-lite for aarch64 Linux (Cortex-A) and tests it under qemu-aarch64:
#   1. the unit tests and the conformance runner at every aarch64 SIMD level, each on an
#      emulated core that has that level and nothing above it (ctest -L arm,
#      tests/arm/arm_tests.cmake);
#   2. cvml on the Cortex model from ../shared at every level: the expected output
#      (skipped with a message where ../shared is absent).
# Needs gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and qemu-user
# (scripts/install_deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
build=${CVML_ARM_BUILD:-build/aarch64}
step() { printf '\n==== arm: %s\n' "$*"; }
fail() { echo "test_arm: FAIL: $*" >&2; exit 1; }

# level:emulated core, lowest level first. Each core has its level and none above it.
levels=(scalar:max)
sysroot=/usr/aarch64-linux-gnu
qemu() { qemu-aarch64 -L "$sysroot" "$@"; }

step "cross build (gcc-aarch64-linux-gnu)"
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DCVML_WITH_CUDA=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target cvml_unit_tests cvml_conformance_tests \
  cvml_simd_probe cvml_tool

step "unit and conformance tests under qemu-aarch64, every level"
ctest --test-dir "$build" --output-on-failure -j"$jobs" -L arm

model=../shared/models/cifar_resnet20_2019
step "cvml on the Cortex model, every level"
if [[ -f $model/symbol && -f $model/case/input.bin ]]; then
  want=$(tail -1 "$model/result_0.txt")
  for entry in "${levels[@]}"; do
    level=${entry%%:*} cpu=${entry#*:}
    got=$(QEMU_CPU=$cpu CVML_SIMD=$level qemu "$build/tools/cvml" run "$model" \
      --input "$model/case/input.bin" --input-format raw | tail -1)
    [[ $got == "$want" ]] || fail "cvml at $level ($cpu) printed '$got', want '$want'"
    echo "cvml at $level ($cpu): $got"
  done
else
  echo "skipped: $model is absent (the Cortex model lives in ../shared)"
fi
