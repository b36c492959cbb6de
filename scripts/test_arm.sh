#!/usr/bin/env bash
# Cross-builds cvm-lite for aarch64 Linux (Cortex-A) and tests it under qemu-aarch64:
#   1. the unit tests and the conformance runner at every aarch64 SIMD level, each on an
#      emulated core that has that level and nothing above it (ctest -L arm,
#      tests/arm/arm_tests.cmake);
#   2. cvml on the Cortex model from ../shared at every level: the expected output
#      (skipped with a message where ../shared is absent);
#   3. instruction counts, the speed measure under emulation: one line per model and
#      level, `arm LEVEL MODEL: instructions N macs M`, N being the guest instructions of
#      one inference as counted by a qemu TCG plugin (tests/arm/insn_count.c, built here
#      for the host): a `cvml bench` of R + 1 runs minus one of 1 run, divided by R, so
#      loading and planning cancel out. cifar_resnet20 at every level; the built-in
#      ResNet-18 at the vector levels (at scalar it would take minutes).
# Needs gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and qemu-user
# (scripts/install_deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
build=${CVML_ARM_BUILD:-build/aarch64}
step() { printf '\n==== arm: %s\n' "$*"; }
fail() { echo "test_arm: FAIL: $*" >&2; exit 1; }

# level:emulated core, lowest level first. Each core has its level and none above it.
levels=(scalar:cortex-a72 neon:cortex-a72 dotprod:neoverse-n1 i8mm:max)
sysroot=/usr/aarch64-linux-gnu
qemu() { qemu-aarch64 -L "$sysroot" "$@"; }

step "cross build (gcc-aarch64-linux-gnu)"
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DCVML_WITH_CUDA=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target cvml_unit_tests cvml_conformance_tests \
  cvml_simd_probe cvml_tool
plugin="$build/libinsn_count.so"
cc -std=c99 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$plugin" tests/arm/insn_count.c

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

# count LEVEL CPU RUNS MODEL...: guest instructions of `cvml bench MODEL` with RUNS runs,
# then the model's MACs (from the bench's JSON).
count() {
  local level=$1 cpu=$2 runs=$3 out json
  shift 3
  out=$(mktemp)
  json=$(QEMU_CPU=$cpu CVML_SIMD=$level CVML_NUM_THREADS=1 qemu -plugin "$plugin,out=$out" \
    "$build/tools/cvml" bench "$@" --threads 1 --warmup 0 --runs "$runs" --json)
  echo "$(cat "$out") $(sed -n 's/.*"macs": \([0-9]*\).*/\1/p' <<<"$json")"
  rm -f "$out"
}
# report LEVEL CPU REPS NAME MODEL...: the instructions of one inference and the MACs.
report() {
  local level=$1 cpu=$2 reps=$3 name=$4 one many
  shift 4
  read -r one macs < <(count "$level" "$cpu" 1 "$@")
  read -r many macs < <(count "$level" "$cpu" $((reps + 1)) "$@")
  echo "arm $level $name: instructions $(((many - one) / reps)) macs $macs"
}
step "instruction counts per inference (qemu TCG plugin)"
if [[ -f $model/symbol ]]; then
  for entry in "${levels[@]}"; do
    report "${entry%%:*}" "${entry#*:}" 4 cifar_resnet20 "$model"
  done
else
  echo "cifar_resnet20 skipped: $model is absent"
fi
for entry in "${levels[@]:1}"; do
  report "${entry%%:*}" "${entry#*:}" 1 resnet18 --model resnet18
done
