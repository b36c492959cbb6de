#!/usr/bin/env bash
# cvm-lite against oneDNN and the VNNI roofline, side by side on this machine.
#   tools/bench/compare.sh [--isa avx2|avx512] [BUILD_DIR=build/release] [ROUNDS=5] [RUNS=30]
#
# --isa picks the instruction set both sides run: avx512 (the default) runs cvm-lite at
# the CPU's best level and oneDNN unrestricted; avx2 runs cvm-lite with CVML_SIMD=avx2
# and oneDNN with ONEDNN_MAX_CPU_ISA=AVX2 (its jit_uni_int8:avx2 kernels), the speed on a
# machine without AVX-512. So that a reader sees the two matched, it prints cvm-lite's
# SIMD level and the oneDNN implementations that ran (ONEDNN_VERBOSE=1, one inference of
# each model and thread count: one line per primitive kind, with a count per
# implementation).
#
# Interleaved rounds (cvm-lite, then oneDNN, for each model and thread count, ROUNDS
# times), so that a machine whose speed drifts (another process, the clock) drifts for
# both; every figure is the median of the rounds' medians. Prints markdown tables:
#  1. ResNet-18 and MobileNet-v1 at batch 1 on 1 and 2 threads: cvm-lite, oneDNN, their
#     ratio, and at avx512 the share of the roofline (MACs / the measured VNNI peak of the
#     threads; the roofline is of 512-bit VPDPBUSD, so avx2 has none);
#  2. sporadic calls: ResNet-18 on 2 threads with 20 ms and 200 ms idle before each run;
#  3. batch 8 on 2 threads: images per second against batch 1;
#  4. round by round, the 2-thread ratios beside what moving cache lines between the two
#     CPUs cost at the round's start (cvml-xcore-probe): on a shared VM that cost changes
#     from minute to minute, and the 2-thread figures with it (docs/performance.md).
# The peers are built with the project where they can be (tools/bench/bench.cmake):
# cvml-dnnl-peer needs Debian's libdnnl-dev, cvml-vnni-roof an x86-64 compiler,
# cvml-xcore-probe Linux (without it the last table shows "-" for the probe). Only
# the multiply-accumulate work is comparable: oneDNN requantizes with float scales.
# Exits 77 (skipped) where oneDNN is not installed or the CPU lacks the ISA asked for.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage() {
  echo "usage: tools/bench/compare.sh [--isa avx2|avx512] [BUILD_DIR] [ROUNDS] [RUNS]" >&2
  exit 2
}
isa=avx512
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --isa) [[ $# -ge 2 ]] || usage; isa=$2; shift 2 ;;
    --isa=*) isa=${1#--isa=}; shift ;;
    -h | --help) usage ;;
    -*) usage ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ ${#args[@]} -le 3 ]] || usage
build=${args[0]:-build/release}
rounds=${args[1]:-5}
runs=${args[2]:-30}
# What each side is told. Whatever the caller's environment says is dropped, so that
# avx512 is the unrestricted default of both.
unset CVML_SIMD ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA ONEDNN_VERBOSE DNNL_VERBOSE
case $isa in
  avx2) cvml_env=(CVML_SIMD=avx2) peer_env=(ONEDNN_MAX_CPU_ISA=AVX2) ;;
  avx512) cvml_env=() peer_env=() ;;
  *) echo "compare: --isa must be avx2 or avx512, not '$isa'" >&2; exit 2 ;;
esac
cvml=$build/tools/cvml
peer=$build/tools/cvml-dnnl-peer
roof=$build/tools/cvml-vnni-roof
probe=$build/tools/cvml-xcore-probe
[[ -x $cvml ]] || { echo "compare: no $cvml (build the project first)" >&2; exit 2; }
# The peer is built where CMake found oneDNN (tools/bench/bench.cmake); without it, say
# whether oneDNN is missing (skipped: how to install it) or the build predates it.
if [[ ! -x $peer ]]; then
  if [[ ! -f /usr/include/oneapi/dnnl/dnnl.hpp ]]; then
    echo "compare: skipped: oneDNN is not installed (no cvml-dnnl-peer in $build)." \
         "Install Debian's libdnnl-dev (sudo apt-get install libdnnl-dev), then" \
         "cmake -S . -B $build && cmake --build $build --target cvml_dnnl_peer" >&2
    exit 77
  fi
  echo "compare: no $peer although libdnnl-dev is installed: reconfigure and build it" \
       "(cmake -S . -B $build && cmake --build $build --target cvml_dnnl_peer)" >&2
  exit 2
fi

json_field() { sed -n "s/.*\"$1\": \"\{0,1\}\([0-9.a-z]*\).*/\1/p"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
cvml_ms() { env "${cvml_env[@]}" "$cvml" bench --json --warmup 3 "$@" | json_field median_ms; }
peer_ms() {
  local threads=$1
  shift
  env "${peer_env[@]}" OMP_NUM_THREADS="$threads" "$peer" "$@" | json_field median_ms
}

# cvm-lite's level must be the one asked for: CVML_SIMD only lowers it, so at avx512 a
# CPU without AVX-512 would run avx2 against an unrestricted oneDNN.
level=$(env "${cvml_env[@]}" "$cvml" bench --model mobilenet --runs 1 --warmup 0 --json | json_field simd)
if [[ $level != "$isa" ]]; then
  echo "compare: skipped: cvm-lite runs at '$level' on this CPU, not $isa" >&2
  exit 77
fi

# onednn_impls MODEL THREADS: what oneDNN ran for one inference of MODEL (and the
# weights' reorders before it), from ONEDNN_VERBOSE=1: the ISA it says it uses, then one
# line per primitive kind, each implementation with how many primitives ran it (from
# the exec lines, onednn_verbose,exec,cpu,KIND,IMPLEMENTATION,...).
onednn_impls() {
  env "${peer_env[@]}" ONEDNN_VERBOSE=1 OMP_NUM_THREADS="$2" "$peer" "$1" --runs 1 --warmup 0 |
    awk -F, '$1 ~ /verbose$/ && $2 == "info" && $4 ~ /^isa:/ { print "isa", $4 }
      $1 ~ /verbose$/ && $2 == "exec" { print $4, $5 }' | sort | uniq -c |
    awk '$2 == "isa" { sub(/^ *[0-9]+ isa isa:/, ""); isa = $0; next }
      !($2 in line) { kinds[++n] = $2 }
      { line[$2] = line[$2] (line[$2] == "" ? "" : ", ") $1 " x " $3 }
      END {
        print "isa: " isa
        for (i = 1; i <= n; i++) print kinds[i] ": " line[kinds[i]]
      }'
}
# prefix TEXT LINES: each of LINES after TEXT.
prefix() { awk -v p="$1" '{ print p $0 }' <<<"$2"; }
# Per model, once where both thread counts ran the same, else for each.
impls=$(for model in resnet18 mobilenet; do
  one=$(onednn_impls $model 1)
  two=$(onednn_impls $model 2)
  if [[ $one == "$two" ]]; then
    prefix "oneDNN $model, 1 and 2 threads, " "$one"
  else
    prefix "oneDNN $model, 1 thread, " "$one"
    prefix "oneDNN $model, 2 threads, " "$two"
  fi
done)
grep -q ': [0-9]* x ' <<<"$impls" ||
  { echo "compare: ONEDNN_VERBOSE=1 printed no exec lines" >&2; exit 1; }

declare -A times
probes=()
for ((round = 1; round <= rounds; round++)); do
  # The read of 400 KB another CPU just wrote, and the re-read (microseconds); "-" where
  # the probe is not built or has no two CPUs.
  probe_line=$([[ -x $probe ]] && "$probe" 20 2>/dev/null || true)
  if [[ -n $probe_line ]]; then
    probes+=("$(json_field read_remote_us <<<"$probe_line") / $(json_field read_local_us <<<"$probe_line")")
  else
    probes+=("-")
  fi
  for model in resnet18 mobilenet; do
    for t in 1 2; do
      times[cvml.$model.$t]+="$(cvml_ms --model $model --threads $t --runs "$runs") "
      times[peer.$model.$t]+="$(peer_ms $t $model --runs "$runs") "
    done
  done
  for gap in 20 200; do
    gap_runs=$(( gap > 100 ? 5 : 15 ))
    times[cvml.gap.$gap]+="$(cvml_ms --model resnet18 --threads 2 --runs $gap_runs --gap-ms $gap) "
    times[peer.gap.$gap]+="$(peer_ms 2 resnet18 --runs $gap_runs --gap-ms $gap) "
  done
  times[cvml.batch8]+="$(cvml_ms --model resnet18 --threads 2 --batch 8 --runs 5) "
done
med() { echo "${times[$1]}" | median; }
# nth KEY N: round N's figure of times[KEY].
nth() { echo "${times[$1]}" | awk -v n="$2" '{ print $n }'; }

declare -A macs
macs[resnet18]=$("$cvml" bench --model resnet18 --runs 1 --warmup 0 --json | json_field macs)
macs[mobilenet]=$("$cvml" bench --model mobilenet --runs 1 --warmup 0 --json | json_field macs)
# The roofline is of 512-bit VPDPBUSD: at avx2 (or without the tool) there is none.
declare -A peak=([1]=0 [2]=0)
if [[ $isa == avx512 && -x $roof ]]; then
  for t in 1 2; do
    peak[$t]=$("$roof" "$t" 5 | json_field gmacs_per_s || echo 0)
  done
fi

# cpuinfo_field NAME: the first CPU's NAME in /proc/cpuinfo. A VM's model name can be as
# bare as "AMD EPYC"; the family and model tell its generation (Zen 4 is family 25).
cpuinfo_field() { awk -F': *' -v f="$1" '$1 ~ "^" f "[ \t]*$" { print $2; exit }' /proc/cpuinfo; }
echo "machine: $(cpuinfo_field 'model name') (family $(cpuinfo_field 'cpu family') model" \
     "$(cpuinfo_field model)), $(nproc) CPUs; $(date -u +%F); $rounds interleaved rounds" \
     "of $runs runs, medians"
if [[ $isa == avx2 ]]; then
  echo "isa avx2: cvm-lite CVML_SIMD=avx2 (level $level), oneDNN ONEDNN_MAX_CPU_ISA=AVX2"
else
  echo "isa avx512: cvm-lite at the CPU's best (level $level), oneDNN unrestricted"
fi
echo "$impls"
if [[ ${peak[1]} != 0 ]]; then
  echo "VNNI roofline: ${peak[1]} GMAC/s on 1 thread, ${peak[2]} on 2"
else
  echo "VNNI roofline: none at $isa"
fi
echo
echo "| model | threads | cvm-lite ms | oneDNN ms | cvm-lite / oneDNN | roofline ms | share of roofline |"
echo "|---|---|---|---|---|---|---|"
for model in resnet18 mobilenet; do
  for t in 1 2; do
    awk -v m=$model -v t=$t -v c="$(med cvml.$model.$t)" -v d="$(med peer.$model.$t)" \
        -v macs="${macs[$model]}" -v peak="${peak[$t]}" 'BEGIN {
      if (peak > 0) {
        roof = macs / (peak * 1e6)
        printf "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.0f %% |\n", m, t, c, d, c / d, roof, 100 * roof / c
      } else {
        printf "| %s | %d | %.3f | %.3f | %.3f | - | - |\n", m, t, c, d, c / d
      }
    }'
  done
done
echo
echo "| ResNet-18, 2 threads | cvm-lite ms | oneDNN ms | cvm-lite / back to back |"
echo "|---|---|---|---|"
back=$(med cvml.resnet18.2)
printf '| back to back | %.3f | %.3f | 1.000 |\n' "$back" "$(med peer.resnet18.2)"
for gap in 20 200; do
  awk -v g=$gap -v c="$(med cvml.gap.$gap)" -v d="$(med peer.gap.$gap)" -v b="$back" \
      'BEGIN { printf "| %d ms idle before each run | %.3f | %.3f | %.3f |\n", g, c, d, c / b }'
done
echo
awk -v b1="$back" -v b8="$(med cvml.batch8)" 'BEGIN {
  printf "ResNet-18, 2 threads: batch 1 %.1f images/s, batch 8 %.1f images/s (%.3f x)\n",
         1000 / b1, 8000 / b8, (8000 / b8) / (1000 / b1) }'
echo
echo "| round | 400 KB read from the other CPU / again, us | ResNet-18, 2 threads | MobileNet-v1, 2 threads |"
echo "|---|---|---|---|"
for ((round = 1; round <= rounds; round++)); do
  awk -v r=$round -v p="${probes[round - 1]}" \
      -v c1="$(nth cvml.resnet18.2 $round)" -v d1="$(nth peer.resnet18.2 $round)" \
      -v c2="$(nth cvml.mobilenet.2 $round)" -v d2="$(nth peer.mobilenet.2 $round)" 'BEGIN {
    printf "| %d | %s | %.3f / %.3f = %.3f | %.3f / %.3f = %.3f |\n", r, p, c1, d1, c1 / d1, c2, d2, c2 / d2 }'
done
