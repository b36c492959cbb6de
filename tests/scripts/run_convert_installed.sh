#!/bin/sh
# Installs the build into a temporary prefix and runs the installed cvml-convert as a
# user would (nothing but the prefix), then checks its model with the installed cvml.
# usage: run_convert_installed.sh BUILD_DIR SOURCE_DIR WORK_DIR
# Exits 77 (CTest's skip) when no python3 with numpy and onnx is found.
set -eu
build=$1 src=$2 work=$3
. "$(dirname "$0")/find_python.sh"
find_python numpy onnx ||
    { echo "skipped: no python3 with numpy and onnx (run scripts/install_deps.sh)"; exit 77; }
install_into "$build" "$work"
convert="$prefix/bin/cvml-convert"
[ -x "$convert" ] || { echo "FAIL: no executable $convert" >&2; exit 1; }
[ -x "$prefix/bin/cvml" ] || { echo "FAIL: cvml-convert is not beside cvml in $prefix/bin" >&2; exit 1; }
unset CVML_LIBRARY LD_LIBRARY_PATH PYTHONPATH
cd "$work"
"$py" -c 'import numpy as np; np.save("calib.npy", np.random.RandomState(0).rand(32, 1, 28, 28).astype(np.float32))'
# The shebang names python3; run it with the interpreter that has onnx.
"$py" "$convert" "$src/tests/convert/models/plain_cnn.onnx" --calibration calib.npy --out plain \
    --report | tee convert.log
grep -q '^gas: ' convert.log
"$prefix/bin/cvml" validate plain
"$py" "$convert" --help | grep -q -- '--calibration'
echo "installed cvml-convert converted a model that the installed cvml validates"
