#!/usr/bin/env bash
# This build against another (a previous commit's), side by side on this machine.
#   tools/bench/vs_build.sh OLD_CVML [NEW_CVML=build/release/tools/cvml] [ROUNDS=5] [RUNS=20]
#
# OLD_CVML is the `cvml` tool of the other build (for example a worktree of the previous
# commit built with -DCVML_WITH_CUDA=OFF -DCVML_BUILD_TESTS=OFF). For ResNet-18 and
# MobileNet-v1 at batch 1, at every x86 SIMD level this CPU has (CVML_SIMD) and on 1 and
# 2 threads, both tools run in interleaved rounds (old, new, old, new, ...), so a
# machine whose speed drifts drifts for both; each figure is the median of the rounds'
# medians. Prints a markdown table with the ratio new / old: about 1.00 means unchanged.
# Both builds must give the same output bytes; the table says so per row (the benchmark
# prints a hash of its output bytes).
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: tools/bench/vs_build.sh OLD_CVML [NEW_CVML] [ROUNDS] [RUNS]"
old=${1:?$usage}
new=${2:-build/release/tools/cvml}
rounds=${3:-5}
runs=${4:-20}
for tool in "$old" "$new"; do
  [[ -x $tool ]] || { echo "vs_build: no cvml tool at $tool ($usage)" >&2; exit 2; }
done

json_field() { sed -n "s/.*\"$1\": \"\{0,1\}\([0-9.a-z]*\).*/\1/p"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

levels=()
for level in avx512 avx2; do
  # A level this CPU lacks runs as the best one it has (the tool reports which it ran):
  # leave it out of the table.
  ran=$(CVML_SIMD=$level "$new" bench --model mobilenet --runs 1 --warmup 0 --json 2>/dev/null |
        json_field simd || true)
  if [[ $ran == "$level" ]]; then levels+=("$level"); fi
done
[[ ${#levels[@]} -gt 0 ]] || levels=(scalar)

declare -A times sums
for ((round = 1; round <= rounds; round++)); do
  for model in resnet18 mobilenet; do
    for level in "${levels[@]}"; do
      for threads in 1 2; do
        for which in old new; do
          tool=$old
          [[ $which == new ]] && tool=$new
          out=$(CVML_SIMD=$level "$tool" bench --json --model "$model" --threads "$threads" \
                --warmup 3 --runs "$runs")
          key="$model $level $threads"
          times[$which $key]+=" $(json_field median_ms <<<"$out")"
          sums[$which $key]=$(json_field output_hash <<<"$out")
        done
      done
    done
  done
done

echo "| model | level | threads | old ms | new ms | new / old | same output |"
echo "|---|---|---|---|---|---|---|"
for model in resnet18 mobilenet; do
  for level in "${levels[@]}"; do
    for threads in 1 2; do
      key="$model $level $threads"
      o=$(median <<<"${times[old $key]}")
      n=$(median <<<"${times[new $key]}")
      same=no
      [[ ${sums[old $key]} == "${sums[new $key]}" ]] && same=yes
      awk -v m="$model" -v l="$level" -v t="$threads" -v o="$o" -v n="$n" -v s="$same" \
        'BEGIN {printf "| %s | %s | %s | %.2f | %.2f | %.3f | %s |\n", m, l, t, o, n, n / o, s}'
    done
  done
done
echo
cpuinfo_field() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -1; }
echo "machine: $(cpuinfo_field 'model name') (family $(cpuinfo_field 'cpu family') model" \
     "$(cpuinfo_field model)), $(nproc) CPUs; $rounds interleaved rounds of $runs runs"
