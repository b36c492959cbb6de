#!/bin/sh
# Installs the build into a temporary prefix (not the configured one) and checks that
# the installed `cvml devices`, a program linked with the installed libcvml.so and one
# linked with libcvml.a all find the installed plugin with no environment variables:
# the library looks beside its own file (dladdr), not only in the configured prefix.
# Without a CUDA toolkit the emulated CUDA plugin stands in for the real one.
# usage: installed_plugin_test.sh BUILD_DIR SOURCE_DIR WORK_DIR CC
set -eu
build=$1 src=$2 work=$3 cc=$4
fail() { echo "installed_plugin_test: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
libdir=$(dirname "$(find "$prefix" -name libcvml.a | head -1)")
plugins="$libdir/cvml/plugins"
if [ ! -f "$plugins/libcvml_cuda.so" ]; then
    [ -f "$build/plugins/emu/libcvml_cuda.so" ] || { echo "skipped: no CUDA plugin built"; exit 77; }
    echo "no CUDA toolkit: the emulated plugin stands in for the installed one"
    cp "$build/plugins/emu/libcvml_cuda.so" "$plugins/"
fi
plugins=$(cd "$plugins" && pwd -P)
# Nothing in the environment points at the prefix.
clean_env() { env -i PATH=/usr/bin:/bin HOME="$work" "$@"; }

echo "== installed cvml devices"
[ -x "$prefix/bin/cvml" ] || fail "no bin/cvml"
clean_env "$prefix/bin/cvml" devices > "$work/devices.txt" || fail "cvml devices failed"
cat "$work/devices.txt"
grep -q "cuda .*$plugins/libcvml_cuda.so" "$work/devices.txt" ||
    fail "the installed cvml did not find $plugins/libcvml_cuda.so"
grep "cuda " "$work/devices.txt" | grep -q "not found" && fail "the plugin is reported as not found"

echo "== a program linked with the installed libcvml.so"
"$cc" -std=c99 -Wall -Werror "$src/tests/user/plugin_probe.c" -I"$prefix/include/cvml" \
    -L"$libdir" -Wl,-rpath,"$libdir" -lcvml -o "$work/probe_shared"
clean_env "$work/probe_shared" "$plugins"

echo "== a program linked with the installed libcvml.a, copied to the prefix's bin"
"$cc" -std=c99 -Wall -Werror "$src/tests/user/plugin_probe.c" -I"$prefix/include/cvml" \
    "$libdir/libcvml.a" -lm -lpthread -ldl -o "$prefix/bin/probe_static"
clean_env "$prefix/bin/probe_static" "$plugins"
echo "installed_plugin_test: passed"
