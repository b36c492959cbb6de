#!/bin/sh
# Installs the build into a temporary prefix and runs the Python binding's tests
# against the installed package, as a user would: only PYTHONPATH set, no
# CVML_LIBRARY, so the package must find the installed libcvml.so by itself.
# usage: run_pytest_installed.sh BUILD_DIR SOURCE_DIR WORK_DIR
# Exits 77 (CTest's skip) when no python3 with numpy and pytest is found.
set -eu
build=$1 src=$2 work=$3
. "$(dirname "$0")/find_python.sh"
find_python numpy pytest ||
    { echo "skipped: no python3 with numpy and pytest (run scripts/install_deps.sh)"; exit 77; }
install_into "$build" "$work"
pkg=$(find "$prefix" -path '*/python/cvml/__init__.py' | head -1)
[ -n "$pkg" ] || { echo "FAIL: no python/cvml package under $prefix" >&2; exit 1; }
pythonpath=$(dirname "$(dirname "$pkg")")
unset CVML_LIBRARY LD_LIBRARY_PATH
cd "$work"
# The acceptance line: importing works with PYTHONPATH alone, from anywhere.
PYTHONPATH="$pythonpath" "$py" -c 'import cvml, sys; print("cvml", cvml.version(), "from", cvml.load_library().path)'
PYTHONPATH="$pythonpath" "$py" - "$prefix" <<'PY'
import os, sys, cvml
path = os.path.realpath(cvml.load_library().path)
assert path.startswith(os.path.realpath(sys.argv[1])), "loaded %s, not the installed library" % path
PY
export PYTHONPATH="$pythonpath" CVML_TEST_INSTALLED=1 CVML_SOURCE_DIR="$src"
exec "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"
