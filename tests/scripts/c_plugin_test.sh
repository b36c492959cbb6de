#!/bin/sh
# The C99 test plugin (tests/plugins/c_plugin.c) through the cvml tool: the plugin ABI's
# version rules, and every conformance case with the plugin first in the devices, which
# must give the expected bytes (and the CPU's exit status where a case fails). Used in
# the tree (tests/plugin.cmake) and against the installed package (install_test.sh).
# usage: c_plugin_test.sh CVML PLUGIN_DIR CASES_DIR WORK_DIR
set -u
cvml=$1 dir=$2 cases=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# meta FIELD CASE: a field of the case's expect block ("" when null).
meta() {
    sed -n 's/^  *"'"$1"'": *"\{0,1\}\([^",]*\)"\{0,1\},\{0,1\}$/\1/p' "$2/meta.json" | head -1 |
        sed 's/^null$//'
}
# on_plugin DEVICE CASE: how many nodes `cvml info` places on DEVICE.
on_plugin() {
    "$cvml" info --json --plugin "$dir/libcvml_$1.so" --device "$1" "$2" 2> /dev/null |
        grep -c "\"device\": \"$1\""
}

relu=$cases/009_relu
# The current ABI, an older minor (2.0 layout) and a newer minor (a longer struct).
for v in cplugin cplugin_old cplugin_new; do
    "$cvml" run "$relu" --input "$relu/input.bin" --expect "$relu/output.bin" \
        --plugin "$dir/libcvml_$v.so" --device "$v" > /dev/null 2> "$work/err" ||
        fail "$v: $(cat "$work/err")"
    n=$(on_plugin "$v" "$relu")
    [ "$n" -ge 1 ] || fail "$v: relu did not run on the plugin"
done
# The next major: refused, naming both versions.
"$cvml" run "$relu" --input "$relu/input.bin" --plugin "$dir/libcvml_cplugin_next.so" \
    --device cplugin_next > /dev/null 2> "$work/err"
rc=$?
[ "$rc" = 2 ] || fail "next major: exit $rc (want 2)"
grep -q "built for plugin ABI version 3.0; this library (cvm-lite [^)]*) speaks ABI version 2\." \
    "$work/err" || fail "next major: unclear message: $(cat "$work/err")"
echo "versions: 2.3, 2.0 and 2.4 plugins run; 3.0 refused: $(cat "$work/err")"

# Every conformance case, the plugin first.
total=0 used=0
for d in "$cases"/*/; do
    d=${d%/}
    [ -f "$d/model.json" ] || continue
    total=$((total + 1))
    "$cvml" run "$d" --input "$d/input.bin" > "$work/cpu.out" 2> /dev/null
    cpu_rc=$?
    # A case that should run also gives its expected bytes with the plugin: `run
    # --expect` prints the output before it compares, so one run checks both.
    outcome=$(meta outcome "$d")
    set --
    [ "$outcome" = ok ] && set -- --expect "$d/$(meta output "$d")"
    "$cvml" run "$d" --input "$d/input.bin" "$@" --plugin "$dir/libcvml_cplugin.so" \
        --device cplugin > "$work/plugin.out" 2> "$work/err"
    rc=$?
    [ "$rc" = "$cpu_rc" ] ||
        { fail "$d: exit $rc with the plugin, $cpu_rc without: $(cat "$work/err")"; continue; }
    cmp -s "$work/cpu.out" "$work/plugin.out" || fail "$d: the outputs differ"
    if [ "$outcome" = ok ]; then
        [ "$rc" = 0 ] || fail "$d: $(cat "$work/err")"
        [ "$(on_plugin cplugin "$d")" -ge 1 ] && used=$((used + 1))
    fi
done
echo "conformance: $total cases, $used of them with nodes on the C plugin, $failures failures"
[ "$used" -ge 20 ] || fail "only $used cases ran nodes on the C plugin"
[ "$failures" = 0 ]
