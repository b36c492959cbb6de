#!/usr/bin/env bash
# Instructions of one inference, cvm-lite at avx2 against oneDNN restricted to AVX2, both
# under qemu-x86_64 with the TCG plugin that counts guest instructions
# (tests/arm/insn_count.c):
#   tools/bench/count_x86.sh [--check] [BUILD_DIR=build/release] [MODEL...=resnet18 mobilenet]
#
# Why: on a machine whose cores the host shares with other guests, the median time
# follows the instruction count more than the minimum does (a shared core's issue slots
# go to both), and timings drift by tens of percent between runs; the count does not. It
# is the same on every x86 machine, so two builds compare by it without a quiet machine.
# It is not a time: a count says nothing of cache misses or of the multipliers' rate.
#
# A count is the difference between a run of R + 1 inferences and one of R (the load, the
# build and the warm-up cancel). qemu 7.2 emulates AVX2 but not AVX-512, so avx2 is the
# only vector level counted; cvm-lite runs with CVML_SIMD=avx2, oneDNN with
# ONEDNN_MAX_CPU_ISA=AVX2 (cvml-dnnl-peer, built where libdnnl-dev is installed).
# Prints one line a model: both counts, their ratio and cvm-lite's per MAC (some 20 s
# a model). --check counts cvm-lite only and fails where its instructions per MAC pass
# the model's bound (max_per_mac below; the test bench.x86_instructions runs it), so that
# a change that makes the kernels run more instructions fails in CI, not only in timings.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The most instructions per MAC cvm-lite may take at avx2: the counts when the bound was
# set (docs/cpu.md, "Instruction counts"), plus some 3% for compilers that schedule
# differently. Lower a bound when a change lowers the count for good.
declare -A max_per_mac=([resnet18]=0.122 [mobilenet]=0.172)

check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
build=${1:-build/release}
shift || true
models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(resnet18 mobilenet)

die() {
  echo "count_x86: $*" >&2
  exit 1
}
command -v qemu-x86_64 >/dev/null || die "qemu-x86_64 not found (Debian: qemu-user)"
cvml=$build/tools/cvml
peer=$build/tools/cvml-dnnl-peer
[[ -x $cvml ]] || die "$cvml not built (cmake --build $build --target cvml_tool)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plugin=$work/libinsn_count.so
cc -std=c99 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$plugin" tests/arm/insn_count.c

# runs_count RUNS PROGRAM ARGS...: the guest instructions of PROGRAM ARGS with RUNS runs.
runs_count() {
  local runs=$1 out=$work/count
  shift
  QEMU_CPU=max qemu-x86_64 -plugin "$plugin,out=$out" "$@" --runs "$runs" --warmup 0 >/dev/null
  cat "$out"
}
# one_inference PROGRAM ARGS...: the instructions of one inference.
one_inference() {
  local one two
  one=$(runs_count 1 "$@")
  two=$(runs_count 2 "$@")
  echo $((two - one))
}

echo "instructions of one inference, batch 1, 1 thread, under qemu-x86_64 (-cpu max)"
for model in "${models[@]}"; do
  macs=$(CVML_SIMD=avx2 "$cvml" bench --model "$model" --runs 1 --warmup 0 --json |
    sed -n 's/.*"macs": \([0-9]*\).*/\1/p')
  [[ $macs =~ ^[1-9][0-9]*$ ]] || die "$model: cvml bench printed no MAC count"
  ours=$(CVML_SIMD=avx2 CVML_NUM_THREADS=1 one_inference "$cvml" bench --model "$model" \
    --threads 1)
  per_mac=$(awk -v n="$ours" -v m="$macs" 'BEGIN { printf "%.3f", n / m }')
  if ((check)); then
    bound=${max_per_mac[$model]:-}
    [[ -n $bound ]] || die "no bound for $model (max_per_mac)"
    echo "$model: cvm-lite avx2 $ours instructions, $per_mac per MAC (bound $bound)"
    awk -v n="$ours" -v m="$macs" -v b="$bound" 'BEGIN { exit !(n / m <= b) }' ||
      die "$model: $ours instructions for $macs MACs, $per_mac per MAC, above the bound $bound"
    continue
  fi
  line="$model: cvm-lite avx2 $ours ($per_mac per MAC)"
  if [[ -x $peer ]]; then
    theirs=$(ONEDNN_MAX_CPU_ISA=AVX2 OMP_NUM_THREADS=1 one_inference "$peer" "$model")
    line+=", oneDNN AVX2 $theirs, cvm-lite / oneDNN $(awk -v a="$ours" -v b="$theirs" \
      'BEGIN { printf "%.3f", a / b }')"
  else
    line+=", oneDNN: $peer not built (libdnnl-dev)"
  fi
  echo "$line"
done
