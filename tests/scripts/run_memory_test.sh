#!/bin/sh
# `cvml run` loads as frugally as the file API: on the ResNet-18 benchmark model
# (11.2 MiB of params) its peak RSS must stay within 1.2 x that of `cvml bench` on the
# same files (the run path once read the whole params file first: 69 vs 17.5 MiB).
# usage: run_memory_test.sh CVML WORK_DIR
set -eu
cvml=$1 work=$2
py=
for p in /usr/bin/python3 python3; do
    command -v "$p" > /dev/null 2>&1 && { py=$p; break; }
done
[ -n "$py" ] || { echo "skipped: no python3 to measure peak RSS"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
"$cvml" bench --model resnet18 --save "$work" > /dev/null
model="$work/resnet18"

# peak_kib CMD...: the command's peak resident set, in KiB (Linux ru_maxrss).
peak_kib() {
    "$py" - "$@" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
run=$(peak_kib "$cvml" run "$model" --input "$model.input.bin" -q)
bench=$(peak_kib "$cvml" bench "$model" --runs 1 --warmup 0)
echo "peak RSS: cvml run $run KiB, cvml bench $bench KiB"
[ $((run * 10)) -le $((bench * 12)) ] || { echo "FAIL: cvml run peaks above 1.2 x cvml bench" >&2; exit 1; }
echo "run_memory_test: passed"
