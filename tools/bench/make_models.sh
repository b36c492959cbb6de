#!/bin/sh
# Regenerates the benchmark models (graph JSON + params + an input) into a directory:
#   tools/bench/make_models.sh BUILD/tools/cvml-bench OUTDIR
# The ResNet-18 params are ~11 MB: generate them at build or test time, never commit.
set -eu
bench=${1:?usage: make_models.sh CVML_BENCH OUTDIR}
out=${2:?usage: make_models.sh CVML_BENCH OUTDIR}
mkdir -p "$out"
for m in resnet18 mobilenet ssd; do
  "$bench" --model "$m" --save "$out"
done
"$bench" --model resnet18 --batch 4 --save "$out"
