#!/bin/sh
# Writes the benchmark models (NAME.json + NAME.params + NAME.input.bin, the input as
# upstream's raw bytes) into a directory:
#   tools/bench/make_models.sh OUTDIR [CVML_BENCH]
# CVML_BENCH defaults to the release build's build/release/tools/cvml-bench.
# The ResNet-18 params are ~11 MB: generate them at build or test time, never commit.
set -eu
usage="usage: make_models.sh OUTDIR [CVML_BENCH]"
out=${1:?$usage}
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${2:-$root/build/release/tools/cvml-bench}
[ -x "$bench" ] || { echo "make_models.sh: no benchmark at $bench (build it, or give its path; $usage)" >&2; exit 2; }
mkdir -p "$out"
for m in resnet18 mobilenet ssd; do
  "$bench" --model "$m" --save "$out"
done
"$bench" --model resnet18 --batch 4 --save "$out"
