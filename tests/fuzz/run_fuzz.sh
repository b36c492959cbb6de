#!/bin/sh
# Builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz/ and runs each
# for SECONDS seconds, seeded from the conformance models (the compiled plan's target
# from a plan it writes); the build runs JOBS jobs (default: one per core).
#   tests/fuzz/run_fuzz.sh SECONDS [BUILD_DIR]
set -eu
seconds=${1:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build-fuzz}
jobs=${JOBS:-$(nproc)}
if ! command -v clang >/dev/null 2>&1 || ! command -v clang++ >/dev/null 2>&1; then
  echo "run_fuzz.sh: clang is not installed; fuzzing skipped"
  exit 77
fi
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCVML_FUZZ=ON -DCVML_WERROR=OFF -DCVML_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target cvml_fuzz_json cvml_fuzz_params cvml_fuzz_load cvml_fuzz_plan

corpus=$build/fuzz-corpus
rm -rf "$corpus"
mkdir -p "$corpus/json" "$corpus/params" "$corpus/load" "$corpus/plan"
for c in "$root"/tests/conformance/cases/*/; do
  n=$(basename "$c")
  cp "$c/model.json" "$corpus/json/$n"
  cp "$c/model.params" "$corpus/params/$n"
  { cat "$c/model.json"; printf '\n#PARAMS#\n'; cat "$c/model.params"; } > "$corpus/load/$n"
done

# Seeds of the hostile shapes of issue 18 (many heads, long chains, many variables,
# NMS near its bound, oversized inputs and outputs), from the release build's
# tests/hostile generator when it is there.
hostile=$root/build/release/tests/cvml_hostile
if [ -x "$hostile" ]; then "$hostile" --write-seeds "$corpus/load"; fi

# A compiled plan with every section and the plans of a few conformance cases, written
# by the target itself.
CVML_FUZZ_PLAN_SEED="$corpus/plan" CVML_FUZZ_PLAN_CASES="$root/tests/conformance/cases" \
  "$build/tests/cvml_fuzz_plan"

# Each target's output goes to fuzz-findings/TARGET.log and its last lines are shown;
# the status is the target's own (a pipe into tail would report tail's, and a finding
# would pass).
status=0
for t in json params load plan; do
  echo "== fuzzing $t for $seconds s"
  mkdir -p "$build/fuzz-findings/$t"
  rc=0
  "$build/tests/cvml_fuzz_$t" "$corpus/$t" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -max_len=262144 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-findings/$t/" >"$build/fuzz-findings/$t.log" 2>&1 || rc=$?
  tail -n 25 "$build/fuzz-findings/$t.log"
  [ "$rc" = 0 ] || { echo "run_fuzz.sh: the $t target exited $rc"; status=1; }
done
exit $status
