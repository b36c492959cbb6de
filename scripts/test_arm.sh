#!/usr/bin/env bash
# Cross-builds cvm-lite for aarch64 Linux (Cortex-A) and tests it under qemu-aarch64:
#   1. the unit tests and the conformance runner at every aarch64 SIMD level, each on an
#      emulated core that has that level and nothing above it (ctest -L arm,
#      tests/arm/arm_tests.cmake);
#   2. cvml on the Cortex model from ../shared at every level: the expected output
#      (skipped with a message where ../shared is absent);
#   3. instruction counts, the speed measure under emulation: one line per model and
#      level, `arm LEVEL MODEL: instructions N macs M per_mac X`, N being the guest
#      instructions of one inference as counted by a qemu TCG plugin
#      (tests/arm/insn_count.c, built here for the host): a `cvml bench` of R + 1 runs
#      minus one of 1 run, divided by R, so loading and planning cancel out.
#      cifar_resnet20 at every level; the built-in ResNet-18 at the vector levels (at
#      scalar it would take minutes). Fails where X is above its bound in max_per_mac
#      below;
#   4. the conformance cases at the Cortex-M levels: mve on a Cortex-M55 (mps3-an547) and
#      dsp on a Cortex-M7 (mps2-an500), under qemu-system-arm, one image per core that
#      reads every case from the host by semihosting (tests/arm/mcu): one line per core,
#      `mcu-conformance BOARD LEVEL: passed P failed F of N`. With them, conv2d cases at
#      the edges of the Cortex-M kernels' shapes (odd channel counts, output widths under
#      4 and not a multiple of 4, K under 16 and not a multiple of 16, strides,
#      dilations, no bias, int32 sums stored; written by tests/arm/mcu/layer_models.cpp
#      under qemu-aarch64, expected bytes from the host library). CVML_ARM_MCU=0 skips it;
#   5. with it, issue 16's four layers as single-conv models (tests/arm/mcu/layer_models.cpp,
#      written by the aarch64 build under qemu; output and gas checked on the core), each
#      counted under -icount less the same model without the conv: one line per board and
#      layer, `mcu-layer BOARD LEVEL LAYER: instructions N per_mac X cmsis_nn Y`, Y being
#      CMSIS-NN's figure from the issue (arm_convolve_wrapper_s8, -Ofast); fails where X > Y
#      (the counts under -icount are deterministic).
# Needs gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and qemu-user, and for step 4
# gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm
# (scripts/install_deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/arm_cache.sh
source scripts/lib/arm_cache.sh

# The most instructions per MAC a model may take at a level, LEVEL.MODEL (docs/cpu.md):
# above it the run fails. The bounds keep a slower kernel from passing unnoticed; they
# sit a little above the figures measured at the dotprod level.
declare -A max_per_mac=([dotprod.cifar_resnet20]=0.25 [dotprod.resnet18]=0.13)

jobs=${JOBS:-$(nproc)}
build=${CVML_ARM_BUILD:-build/aarch64}
step() { printf '\n==== arm: %s\n' "$*"; }
fail() { echo "test_arm: FAIL: $*" >&2; exit 1; }

# level:emulated core, lowest level first. Each core has its level and none above it.
levels=(scalar:cortex-a72 neon:cortex-a72 dotprod:neoverse-n1 i8mm:max)
# board:toolchain of the Cortex-M levels (mve, dsp).
mcu_boards=(mps3-an547:cortex-m55 mps2-an500:cortex-m7)
sysroot=/usr/aarch64-linux-gnu
qemu() { qemu-aarch64 -L "$sysroot" "$@"; }

step "cross build (gcc-aarch64-linux-gnu)"
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 ||
  fail "no aarch64-linux-gnu-g++: run scripts/install_deps.sh"
# A tree configured without the cross compiler (or otherwise than here) would build at
# the wrong optimization or for the wrong machine, and CMake keeps what it cached.
if why=$(arm_cache_stale "$build"); then
  echo "test_arm: $build was configured $why: deleting it and configuring afresh"
  rm -rf "$build"
fi
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DCVML_WITH_CUDA=OFF >/dev/null
if why=$(arm_cache_stale "$build"); then
  fail "$build is configured $why even after configuring it afresh"
fi
cmake --build "$build" -j"$jobs" --target cvml_unit_tests cvml_conformance_tests \
  cvml_simd_probe cvml_tool cvml_layer_models
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
# report LEVEL CPU REPS NAME MODEL...: the instructions of one inference, the MACs and
# the instructions per MAC; fails where max_per_mac has a bound for LEVEL.NAME that the
# figure is above.
report() {
  local level=$1 cpu=$2 reps=$3 name=$4 one many n per_mac bound
  shift 4
  read -r one macs < <(count "$level" "$cpu" 1 "$@")
  read -r many macs < <(count "$level" "$cpu" $((reps + 1)) "$@")
  [[ $macs =~ ^[1-9][0-9]*$ ]] || fail "arm $level $name: cvml bench printed no MAC count"
  n=$(((many - one) / reps))
  per_mac=$(awk -v n="$n" -v m="$macs" 'BEGIN { printf "%.3f", n / m }')
  echo "arm $level $name: instructions $n macs $macs per_mac $per_mac"
  bound=${max_per_mac[$level.$name]:-}
  # The exact ratio against the bound, not the rounded one printed.
  [[ -z $bound ]] || awk -v n="$n" -v m="$macs" -v b="$bound" 'BEGIN { exit !(n / m <= b) }' ||
    fail "arm $level $name: $n instructions for $macs MACs, $per_mac per MAC, above the" \
      "bound $bound (max_per_mac in scripts/test_arm.sh)"
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

# CMSIS-NN's instructions per MAC for issue 16's layers, "M55/M7".
declare -A cmsis_nn=([conv3x3_16_32x32]=0.388/2.333 [conv3x3_32_16x16]=0.253/1.927
  [conv3x3_64_8x8]=0.206/1.762 [conv1x1_64_8x8]=0.394/2.076)
# mcu_layer_count DIR BOARD LAYER: the instructions of the layer image's run and its level
# (the image checks the output bytes and the gas, and fails otherwise).
mcu_layer_count() {
  local out rc=0
  out=$(timeout 600 qemu-system-arm -M "$2" -icount shift=0 -nographic -monitor none \
    -serial none -semihosting-config enable=on,target=native \
    -kernel "$1/mcu_layer_$3.elf" 2>&1) || rc=$?
  [[ $rc -eq 0 ]] || { echo "$out" >&2; fail "layer $3 on $2 (exit $rc)"; }
  echo "$(sed -nE 's/.* instructions ([0-9]+).*/\1/p' <<<"$out") $(sed -nE 's/.* simd ([a-z]+).*/\1/p' <<<"$out")"
}

if [[ ${CVML_ARM_MCU:-1} != 0 ]]; then
  step "conformance cases at the Cortex-M levels (qemu-system-arm, semihosting)"
  manifest=build/mcu-conformance.txt
  layers=$PWD/build/mcu-layers kernel_cases=build/mcu-kernel-cases
  rm -rf "$layers" "$kernel_cases"
  QEMU_CPU=cortex-a72 qemu "$build/tests/cvml_layer_models" "$layers" "$kernel_cases" >/dev/null ||
    fail "writing the single-layer models"
  # The conformance cases, then conv2d cases at the edges of the Cortex-M kernels' shapes
  # (layer_models.cpp: their expected bytes are the host library's).
  echo "$(python3 tests/arm/mcu/manifest.py tests/conformance/cases "$manifest") cases," \
    "$(python3 tests/arm/mcu/manifest.py "$kernel_cases" "$manifest.kernels") kernel cases"
  cat "$manifest.kernels" >>"$manifest"
  launcher=()
  command -v ccache >/dev/null 2>&1 &&
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  for entry in "${mcu_boards[@]}"; do
    board=${entry%%:*} core=${entry#*:} dir=build/mcu-conformance-${entry%%:*}
    cmake -S tests/arm/mcu -B "$dir" -DMCU_BOARD="$board" -DCMAKE_BUILD_TYPE=MinSizeRel \
      -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain/$core.cmake" -DMCU_MANIFEST="$manifest" \
      -DMCU_LAYERS_DIR="$layers" \
      "${launcher[@]}" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; fail "configure $board"; }
    cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; fail "build $board"; }
    rc=0
    out=$(timeout 600 qemu-system-arm -M "$board" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native -kernel "$dir/mcu_conformance.elf" 2>&1) || rc=$?
    echo "$out"
    if [[ $rc -ne 0 ]] || ! grep -q "^mcu-conformance $board .* failed 0 of" <<<"$out"; then
      fail "conformance cases on $board (exit $rc)"
    fi
    for layer in conv3x3_16_32x32 conv3x3_32_16x16 conv3x3_64_8x8 conv1x1_64_8x8; do
      counted=$(mcu_layer_count "$dir" "$board" "$layer")
      read -r n level <<<"$counted"
      counted=$(mcu_layer_count "$dir" "$board" "${layer}_base")
      read -r base _ <<<"$counted"
      macs=$(sed -n 's/.*"macs": \([0-9]*\).*/\1/p' "$layers/$layer/meta.json")
      cmsis=${cmsis_nn[$layer]}
      [[ $core == cortex-m7 ]] && cmsis=${cmsis#*/} || cmsis=${cmsis%/*}
      per_mac=$(awk -v a=$((n - base)) -v m="$macs" 'BEGIN { printf "%.3f", a / m }')
      echo "mcu-layer $board $level $layer: instructions $((n - base)) per_mac $per_mac cmsis_nn $cmsis"
      awk -v a="$per_mac" -v b="$cmsis" 'BEGIN { exit !(a <= b) }' ||
        fail "layer $layer on $board: $per_mac instructions per MAC, above CMSIS-NN's $cmsis"
    done
  done
fi
