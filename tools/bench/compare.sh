#!/usr/bin/env bash
# cvm-lite against oneDNN and the VNNI roofline, side by side on this machine.
#   tools/bench/compare.sh [BUILD_DIR=build/release] [ROUNDS=5] [RUNS=30]
#
# Interleaved rounds (cvm-lite, then oneDNN, for each model and thread count, ROUNDS
# times), so that a machine whose speed drifts (another process, the clock) drifts for
# both; every figure is the median of the rounds' medians. Prints markdown tables:
#  1. ResNet-18 and MobileNet-v1 at batch 1 on 1 and 2 threads: cvm-lite, oneDNN, their
#     ratio, and the share of the roofline (MACs / the measured VNNI peak of the threads);
#  2. sporadic calls: ResNet-18 on 2 threads with 20 ms and 200 ms idle before each run;
#  3. batch 8 on 2 threads: images per second against batch 1.
# The peers are built with the project where they can be (tools/bench/bench.cmake):
# cvml-dnnl-peer needs Debian's libdnnl-dev, cvml-vnni-roof an x86-64 compiler. Only
# the multiply-accumulate work is comparable: oneDNN requantizes with float scales.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${2:-5}
runs=${3:-30}
cvml=$build/tools/cvml
peer=$build/tools/cvml-dnnl-peer
roof=$build/tools/cvml-vnni-roof
[[ -x $cvml ]] || { echo "compare: no $cvml (build the project first)" >&2; exit 2; }
if [[ ! -x $peer ]]; then
  echo "compare: no $peer: install libdnnl-dev (apt-get install libdnnl-dev), then" \
       "reconfigure and build $build" >&2
  exit 2
fi

json_field() { sed -n "s/.*\"$1\": \"\{0,1\}\([0-9.a-z]*\).*/\1/p"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
cvml_ms() { "$cvml" bench --json --warmup 3 "$@" | json_field median_ms; }
peer_ms() {
  local threads=$1
  shift
  OMP_NUM_THREADS=$threads "$peer" "$@" | json_field median_ms
}

declare -A times
for ((round = 1; round <= rounds; round++)); do
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

declare -A macs
macs[resnet18]=$("$cvml" bench --model resnet18 --runs 1 --warmup 0 --json | json_field macs)
macs[mobilenet]=$("$cvml" bench --model mobilenet --runs 1 --warmup 0 --json | json_field macs)
declare -A peak
for t in 1 2; do
  peak[$t]=$("$roof" "$t" 5 | json_field gmacs_per_s || echo 0)
done

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs;" \
     "$(date -u +%F); $rounds interleaved rounds of $runs runs, medians"
echo "VNNI roofline: ${peak[1]} GMAC/s on 1 thread, ${peak[2]} on 2"
echo
echo "| model | threads | cvm-lite ms | oneDNN ms | cvm-lite / oneDNN | roofline ms | share of roofline |"
echo "|---|---|---|---|---|---|---|"
for model in resnet18 mobilenet; do
  for t in 1 2; do
    awk -v m=$model -v t=$t -v c="$(med cvml.$model.$t)" -v d="$(med peer.$model.$t)" \
        -v macs="${macs[$model]}" -v peak="${peak[$t]}" 'BEGIN {
      roof = peak > 0 ? macs / (peak * 1e6) : 0
      share = 100 * roof / c
      printf "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.0f %% |\n", m, t, c, d, c / d, roof, share
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
