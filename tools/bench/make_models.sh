#!/bin/sh
# Writes the benchmark models (NAME.json + NAME.params + NAME.input.bin, the input as
# upstream's raw bytes) into a directory:
#   tools/bench/make_models.sh OUTDIR [CVML]
# CVML, the `cvml` tool, defaults to the release build's build/release/tools/cvml.
# The ResNet-18 params are ~11 MB: generate them at build or test time, never commit.
set -eu
usage="usage: make_models.sh OUTDIR [CVML]"
out=${1:?$usage}
root=$(cd "$(dirname "$0")/../.." && pwd)
cvml=${2:-$root/build/release/tools/cvml}
[ -x "$cvml" ] || { echo "make_models.sh: no cvml tool at $cvml (build it, or give its path; $usage)" >&2; exit 2; }
mkdir -p "$out"
for m in resnet18 mobilenet ssd; do
  "$cvml" bench --model "$m" --save "$out"
done
"$cvml" bench --model resnet18 --batch 4 --save "$out"
