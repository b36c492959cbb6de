#!/bin/sh
# Runs a C example on the bundled model and compares its output line with the
# expected one. usage: run_example.sh EXE SOURCE_DIR [extra args before the files]
# CVML_TEST_EMULATOR (Wine, for the Windows build) runs the program when set.
set -eu
exe=$1 src=$2
shift 2
model="$src/examples/models/tiny_convnet"
out=$(${CVML_TEST_EMULATOR:-} "$exe" "$@" "$model.json" "$model.params" "$model.input.bin" | tr -d '\r')
echo "$out"
want=$(sed -n 's/.*"output": *\[\(.*\)\].*/\1/p' "$model.expected.json" | tr -d ',')
echo "$out" | tail -1 | grep -qx -- "$want" || { echo "FAIL: want '$want'" >&2; exit 1; }
