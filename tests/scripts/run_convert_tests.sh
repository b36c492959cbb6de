#!/bin/sh
# Runs one of the ONNX converter's pytest files (tests/convert) against a built
# libcvml.so.
# usage: run_convert_tests.sh LIBCVML SOURCE_DIR TEST_FILE [needs-dataset|-] [PYTEST_ARGS...]
# Exits 77 (CTest's skip), saying why, when no python3 with numpy, pytest and onnx is
# found, or when the test needs the Fashion-MNIST dataset and it is absent
# (scripts/install_deps.sh installs python3-onnx and dataset-fashion-mnist).
set -eu
lib=$1 src=$2 file=$3 needs=${4:-}
shift 3
[ $# -gt 0 ] && shift
dataset=/usr/share/datasets/fashion-mnist
if [ "$needs" = needs-dataset ] && [ ! -f "$dataset/t10k-images-idx3-ubyte.gz" ]; then
    echo "skipped: the Fashion-MNIST dataset is not in $dataset (Debian dataset-fashion-mnist)"
    exit 77
fi
. "$(dirname "$0")/find_python.sh"
find_python numpy pytest onnx ||
    { echo "skipped: no python3 with numpy, pytest and onnx (run scripts/install_deps.sh)"; exit 77; }
export CVML_LIBRARY="$lib" CVML_SOURCE_DIR="$src"
exec "$py" -m pytest -q -p no:cacheprovider "$src/tests/convert/$file" "$@"
