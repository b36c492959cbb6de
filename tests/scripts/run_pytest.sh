#!/bin/sh
# Runs the Python binding's pytest suite against a built libcvml.so.
# usage: run_pytest.sh LIBCVML SOURCE_DIR [PRELOAD]
# Exits 77 (CTest's skip) when no python3 with numpy and pytest is found
# (scripts/install_deps.sh installs python3-numpy and python3-pytest).
set -eu
lib=$1 src=$2 preload=${3:-}
for py in /usr/bin/python3 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy, pytest' 2>/dev/null; then
        export CVML_LIBRARY="$lib" CVML_SOURCE_DIR="$src"
        if [ -n "$preload" ]; then
            # A sanitized libcvml.so needs its runtime loaded first; Python itself leaks.
            export LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0
        fi
        exec "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"
    fi
done
echo "skipped: no python3 with numpy and pytest (run scripts/install_deps.sh)"
exit 77
