#!/bin/sh
# Builds the Go example (cgo + dlopen of libcvml.so) and runs the bundled model with
# it. Exits 77 (CTest's skip) with a message when no Go toolchain is installed
# (Debian: golang-go).
# usage: go_example.sh LIBCVML SOURCE_DIR WORK_DIR [PRELOAD]
set -eu
lib=$1 src=$2 work=$3 preload=${4:-}
if ! command -v go > /dev/null 2>&1; then
    echo "skipped: no Go toolchain (install Debian's golang-go to run this test)"
    exit 77
fi
model="$src/examples/models/tiny_convnet"
mkdir -p "$work"
export GOCACHE="$work/gocache" GOPATH="$work/gopath" GOFLAGS=-mod=mod CGO_ENABLED=1
(cd "$src/examples/go" && go build -o "$work/cvmlrun" .)
if [ -n "$preload" ]; then
    export LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0
fi
"$work/cvmlrun" -lib "$lib" "$model.json" "$model.params" "$model.input.bin" > "$work/out"
cat "$work/out"
want=$(sed -n 's/.*"output": *\[\(.*\)\].*/\1/p' "$model.expected.json" | tr -d ',')
gas=$(sed -n 's/.*"gas": *\([0-9]*\).*/\1/p' "$model.expected.json")
[ "$(sed -n 2p "$work/out")" = "$want" ] || { echo "FAIL: output differs, want '$want'" >&2; exit 1; }
[ "$(sed -n 1p "$work/out")" = "gas $gas" ] || { echo "FAIL: gas differs, want $gas" >&2; exit 1; }
# errors carry the class as the exit status
if "$work/cvmlrun" -lib "$lib" "$model.json" "$model.params" "$model.json" 2> "$work/err"; then
    echo "FAIL: a wrong-size input was accepted" >&2
    exit 1
else
    rc=$?
    [ "$rc" = 1 ] || { echo "FAIL: wrong-size input gave exit $rc, want 1" >&2; exit 1; }
fi
echo "go example passed"
