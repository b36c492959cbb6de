#!/usr/bin/env bash
# Builds the cvml tool (and the core library it links) and runs the bundled example
# model, checking its output bytes against the expected ones.
# Needs only a C/C++ compiler and CMake.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
cmake -S . -B build/example -DCMAKE_BUILD_TYPE=Release -DCVML_BUILD_TESTS=OFF >/dev/null
cmake --build build/example -j"$jobs" --target cvml_tool

model=examples/models/tiny_convnet
cvml=build/example/tools/cvml
"$cvml" info "$model"
echo
echo "output:"
"$cvml" run "$model" --input "$model.input.bin" --expect "$model.output.bin"
