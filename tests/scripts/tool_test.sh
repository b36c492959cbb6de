#!/bin/sh
# Tests of the cvml tool: exit codes (0 / 1 logic / 2 runtime / 64 usage), one error
# line on stderr, and every subcommand on the bundled model, the conformance cases and
# the real model.
# usage: tool_test.sh CVML SOURCE_DIR WORK_DIR usage|bundled|conformance|real
set -u
cvml=$1 src=$2 work=$3 mode=$4
rm -rf "$work" && mkdir -p "$work"
failures=0
model="$src/examples/models/tiny_convnet"

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect CODE CMD...: runs CMD, checks its exit status; on an error status, stderr
# must be exactly one line starting with "cvml".
expect() {
    want=$1
    shift
    "$@" > "$work/out" 2> "$work/err"
    got=$?
    if [ "$got" != "$want" ]; then
        fail "exit $got (want $want): $*"
        sed 's/^/  stderr: /' "$work/err" | head -3 >&2
        return
    fi
    if [ "$want" != 0 ]; then
        lines=$(wc -l < "$work/err")
        [ "$lines" = 1 ] || fail "$lines stderr lines (want 1): $*"
        grep -q '^cvml' "$work/err" || fail "stderr does not start with 'cvml': $*"
    fi
}

contains() { grep -q -- "$1" "$work/$2" || fail "'$1' not in $2 of the last command"; }

# npy SHAPE INT8_FILE OUT: writes INT8_FILE's bytes as a version-1 .npy of int8 with
# the shape "SHAPE" (as Python writes it, e.g. "1, 1, 12, 12").
npy() {
    h="{'descr': '|i1', 'fortran_order': False, 'shape': ($1), }"
    pad=$(((64 - (10 + ${#h} + 1) % 64) % 64))
    len=$((${#h} + pad + 1))
    {
        printf '\223NUMPY\001\000'
        printf "\\$(printf %03o "$len")\\000"
        printf "%s%${pad}s\n" "$h" ""
        cat "$2"
    } > "$3"
}

case_dirs() { ls -d "$src/tests/conformance/cases"/*/ | sed 's,/$,,'; }

# meta FIELD CASE: a field of the case's expect block ("" when null).
meta() {
    sed -n 's/^  *"'"$1"'": *"\{0,1\}\([^",]*\)"\{0,1\},\{0,1\}$/\1/p' "$2/meta.json" | head -1 |
        sed 's/^null$//'
}

case "$mode" in
usage)
    expect 0 "$cvml" --help
    contains "info MODEL" out
    expect 64 "$cvml"
    expect 64 "$cvml" frobnicate
    expect 0 "$cvml" version
    for c in info run validate devices save; do
        expect 0 "$cvml" "$c" --help
        contains "usage: cvml $c" out
    done
    # bench is dispatched when tools/bench is in the tree; without it, one usage error
    "$cvml" --help > "$work/help"
    if grep -q "bench " "$work/help"; then
        expect 0 "$cvml" bench --help
        contains "usage: cvml bench" out
        expect 64 "$cvml" bench --bogus
        contains "cvml bench --help" err
        expect 64 "$cvml" bench --runs
        expect 64 "$cvml" bench "$model" --model ssd
        expect 64 "$cvml" bench a b c
        expect 64 "$cvml" bench "$model" --save "$work"
        expect 1 "$cvml" bench "$work/missing"
    else
        expect 64 "$cvml" bench
        contains "no benchmark" err
    fi
    expect 64 "$cvml" info
    expect 64 "$cvml" info a b c
    expect 64 "$cvml" info --bogus "$model"
    expect 64 "$cvml" run "$model"
    expect 64 "$cvml" run "$model" --input
    expect 64 "$cvml" run "$model" --input x --threads 0
    expect 64 "$cvml" run "$model" --input x --threads many
    expect 64 "$cvml" run "$model" --input x --repeat 0
    expect 64 "$cvml" run "$model" --input x --input-format jpeg
    expect 64 "$cvml" run "$model" --input x --input y
    expect 64 "$cvml" save "$model"
    expect 64 "$cvml" devices extra
    expect 64 "$cvml" validate --json=1 "$model"
    expect 0 "$cvml" devices
    contains "cpu" out
    # the plugin directories it names can exist: none lies under the program's own file
    grep -qF "$cvml/" "$work/out" && fail "cvml devices names a path under the executable: $(cat "$work/out")"
    expect 0 "$cvml" devices --json
    contains '"devices"' out
    # bad files: missing, a directory without a model, garbage, empty
    expect 1 "$cvml" info "$work/missing"
    mkdir -p "$work/emptydir"
    expect 1 "$cvml" validate "$work/emptydir"
    printf '{"nodes": [' > "$work/garbage.json"
    : > "$work/garbage.params"
    "$cvml" validate "$work/garbage.json" > /dev/null 2>&1
    rc=$?
    [ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "garbage model: exit $rc (want 1 or 2)"
    expect 1 "$cvml" validate "$work/garbage.json" "$work/missing.params"
    ;;
bundled)
    expect 0 "$cvml" validate "$model"
    contains "valid" out
    expect 0 "$cvml" validate "$model.json" "$model.params"
    expect 0 "$cvml" info "$model"
    for w in "format" "gas" "operators" "conv2d" "input 0" "output 0" "parameters" "devices" "cpu"; do
        contains "$w" out
    done
    expect 0 "$cvml" info --json "$model"
    contains '"gas"' out
    contains '"node_list"' out
    gas=$(sed -n 's/.*"gas": *\([0-9]*\).*/\1/p' "$model.expected.json")
    contains "\"total\": $gas" out
    # run: raw input, text output on stdout, --expect in three formats
    expect 0 "$cvml" run "$model" --input "$model.input.bin"
    want=$(sed -n 's/.*"output": *\[\(.*\)\].*/\1/p' "$model.expected.json" | tr -d ',')
    [ "$(cat "$work/out")" = "$want" ] || fail "run printed '$(cat "$work/out")', want '$want'"
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --expect "$model.output.bin"
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --output "$work/o.npy"
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --output "$work/o.txt"
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --output "$work/o.bin"
    cmp -s "$work/o.bin" "$model.output.bin" || fail "--output .bin differs from the expected bytes"
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --expect "$work/o.npy"
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --expect "$work/o.txt"
    # inputs as .npy and as text round-trip through the output writers
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --output "$work/o2.npy" --threads 2
    head -c 100 "$work/o.npy" | grep -q "'shape': (1, 10)" || fail "npy output lost the shape"
    { echo 4; echo 1 1 12 12; od -An -v -td1 "$model.input.bin"; } > "$work/in.txt"
    expect 0 "$cvml" run "$model" --input "$work/in.txt" --expect "$model.output.bin"
    # .npy input: the model's shape runs, another shape of the same size is refused
    npy "1, 1, 12, 12" "$model.input.bin" "$work/in.npy"
    expect 0 "$cvml" run "$model" --input "$work/in.npy" --expect "$model.output.bin"
    npy "1, 12, 12, 1" "$model.input.bin" "$work/wrong_shape.npy"
    expect 1 "$cvml" run "$model" --input "$work/wrong_shape.npy"
    contains "shape (1, 12, 12, 1), the model's input" err
    { echo 4; echo 1 12 1 12; od -An -v -td1 "$model.input.bin"; } > "$work/wrong_shape.txt"
    expect 1 "$cvml" run "$model" --input "$work/wrong_shape.txt"
    contains "shape (1, 12, 1, 12)" err
    # raw bytes that happen to begin like a .npy file are raw when the size fits: with
    # no extension the model's input size decides, with .bin the extension does
    { printf '\223NUMPY\001\000'; tail -c +9 "$model.input.bin"; } > "$work/npyish"
    cp "$work/npyish" "$work/npyish.bin"
    expect 0 "$cvml" run "$model" --input "$work/npyish"
    expect 0 "$cvml" run "$model" --input "$work/npyish.bin"
    head -c 100 "$work/npyish" > "$work/npyish_short"
    expect 1 "$cvml" run "$model" --input "$work/npyish_short"
    contains "input-format raw" err
    expect 1 "$cvml" run "$model" --input "$work/npyish.bin" --input-format npy
    expect 1 "$cvml" run "$model" --input "$work/in.npy" --input-format raw
    contains "input-format npy or text" err
    # a params file given as MODEL means its model
    expect 0 "$cvml" info "$model.params" --brief
    contains "tiny_convnet.json" out
    cp "$model.params" "$work/orphan.params"
    expect 1 "$cvml" info "$work/orphan.params"
    contains "is a params file" err
    # bench takes MODEL like every command; its saved inputs run as they are
    expect 0 "$cvml" bench "$model" --runs 2 --warmup 0
    expect 0 "$cvml" bench "$model" --runs 1 --warmup 0 --device cpu
    expect 1 "$cvml" bench "$model" --runs 1 --device no-such-device
    expect 2 "$cvml" bench "$model" --runs 1 --plugin "$work/no-such-plugin.so"
    expect 64 "$cvml" bench "$model" --device ,
    expect 0 "$cvml" bench "$model.json" "$model.params" --runs 1 --warmup 0 --json
    contains '"median_ms"' out
    mkdir -p "$work/bench_models"
    expect 0 "$cvml" bench --model ssd --save "$work/bench_models"
    contains "ssd.input.bin" out
    expect 0 "$cvml" run "$work/bench_models/ssd" --input "$work/bench_models/ssd.input.bin"
    # a wrong expectation fails loudly with the first differing index
    # (the output is int8 of precision 8, so -128 never occurs in it)
    cp "$model.output.bin" "$work/wrong.bin"
    printf '\200' | dd of="$work/wrong.bin" bs=1 seek=2 conv=notrunc 2> /dev/null
    expect 1 "$cvml" run "$model" --input "$model.input.bin" --expect "$work/wrong.bin"
    contains "at index 2" err
    head -c 5 "$model.output.bin" > "$work/short.bin"
    expect 1 "$cvml" run "$model" --input "$model.input.bin" --expect "$work/short.bin"
    # bad inputs
    head -c 10 "$model.input.bin" > "$work/short_in.bin"
    expect 1 "$cvml" run "$model" --input "$work/short_in.bin"
    contains "144" err
    echo "1 2 x" > "$work/bad.txt"
    expect 1 "$cvml" run "$model" --input "$work/bad.txt"
    { echo 4; echo 1 1 12 12; yes 300 | head -144; } > "$work/big.txt"
    expect 1 "$cvml" run "$model" --input "$work/big.txt"
    contains "does not fit int8" err
    expect 1 "$cvml" run "$model" --input "$work/missing.bin"
    expect 1 "$cvml" run "$model" --input "$model.input.bin" --device no-such-device
    # profile, json
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --profile --repeat 3
    for w in "profile: 3 runs" "conv2d_0" "dense" "operator"; do contains "$w" out; done
    # fused nodes name the node that did their work; views say they did none
    contains "cvm_right_shift_0 .*fused into conv2d_0" out
    # dense takes its tail in the vector levels; the scalar level runs it as its own node
    if "$cvml" devices | grep -q "^cpu simd  *scalar"; then
        contains "cvm_right_shift_1 " out
    else
        contains "cvm_right_shift_1 .*fused into dense_0" out
    fi
    contains "flatten_0 .*view of its input" out
    expect 0 "$cvml" run "$model" --input "$model.input.bin" --profile --json
    for w in '"profile"' '"nodes"' '"time_us"' '"output"'; do contains "$w" out; done
    contains '"fused_into": "conv2d_0"' out
    # the graph's edges: the node table's inputs, --graph, --json and --dot
    expect 0 "$cvml" info "$model"
    contains "dense_0 .*flatten_0, fc_w, fc_b" out
    expect 0 "$cvml" info "$model" --graph
    contains "^ *3  conv2d_0 = conv2d(data, conv_w, conv_b) (1, 4, 12, 12)  cpu$" out
    contains "relu_0 = relu(cvm_clip_0) .*fused into conv2d_0" out
    expect 0 "$cvml" info --json "$model"
    contains '"inputs": \[' out
    expect 0 "$cvml" info "$model" --brief --dot "$work/g.dot"
    contains "format" out
    grep -q '^digraph ' "$work/g.dot" || fail "--dot wrote no digraph"
    grep -q 'n7 -> n8;' "$work/g.dot" || fail "--dot lacks the edge max_pool2d_0 -> flatten_0"
    grep -q 'conv_w' "$work/g.dot" && fail "--dot drew a parameter"
    expect 0 "$cvml" info "$model" --dot -
    grep -q '^digraph ' "$work/out" || fail "--dot - printed no digraph"
    if command -v dot > /dev/null 2>&1; then
        dot -Tsvg "$work/g.dot" -o "$work/g.svg" || fail "Graphviz cannot render --dot's file"
    fi
    expect 64 "$cvml" info "$model" --dot
    expect 2 "$cvml" info "$model" --dot "$work/no/such/dir/g.dot"
    # save: a directory, a prefix; the saved model runs to the same bytes
    expect 0 "$cvml" save "$model" --out "$work/saved"
    expect 0 "$cvml" run "$work/saved" --input "$model.input.bin" --expect "$model.output.bin"
    mkdir -p "$work/savedir"
    expect 0 "$cvml" save "$model" --out "$work/savedir"
    expect 0 "$cvml" validate "$work/savedir"
    expect 2 "$cvml" save "$model" --out "$work/no/such/dir/x"
    # a corrupted params file is refused with its class
    head -c 40 "$model.params" > "$work/trunc.params"
    "$cvml" validate "$model.json" "$work/trunc.params" > /dev/null 2> "$work/err"
    rc=$?
    [ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "truncated params: exit $rc (want 1 or 2)"
    ;;
conformance)
    dirs=$(case_dirs)
    [ -n "$dirs" ] || { fail "no conformance cases in $src/tests/conformance/cases"; dirs=; }
    n=0
    for d in $dirs; do
        outcome=$(meta outcome "$d")
        class=$(meta class "$d")
        code=0
        [ "$class" = logic ] && code=1
        [ "$class" = runtime ] && code=2
        case "$outcome" in
        load_error)
            expect "$code" "$cvml" validate "$d"
            expect "$code" "$cvml" info "$d"
            expect "$code" "$cvml" run "$d" --input "$d/input.bin"
            ;;
        ok | inference_error)
            expect 0 "$cvml" validate "$d"
            expect 0 "$cvml" info --json "$d"
            gas=$(meta gas "$d")
            contains "\"total\": $gas" out
            if [ "$outcome" = ok ]; then
                out=$(meta output "$d")
                expect 0 "$cvml" run "$d" --input "$d/input.bin" --expect "$d/$out"
                expect 0 "$cvml" save "$d" --out "$work/saved"
                expect 0 "$cvml" run "$work/saved" --input "$d/input.bin" --expect "$d/$out"
            else
                expect "$code" "$cvml" run "$d" --input "$d/input.bin"
            fi
            ;;
        *)
            # "clean": any outcome but a crash
            "$cvml" run "$d" --input "$d/input.bin" > /dev/null 2>&1
            rc=$?
            [ "$rc" -le 2 ] || fail "crash or bad exit $rc: $d"
            ;;
        esac
        n=$((n + 1))
    done
    echo "checked $n conformance cases"
    ;;
real)
    real="$src/../shared/models/cifar_resnet20_2019"
    [ -f "$real/symbol" ] || { echo "skipped: no real model at $real"; exit 77; }
    expect 0 "$cvml" run "$real" --input "$real/cpu.txt"
    [ "$(cat "$work/out")" = "20 53 -18 -4 -48 -17 -32 -29 -14 89" ] ||
        fail "resnet20 printed '$(cat "$work/out")'"
    expect 0 "$cvml" run "$real" --input "$real/cpu.txt" --expect "$real/result_0.txt" --threads 2
    # the chain's raw input bytes begin with "\223NUMPY" by chance: they run as raw
    expect 0 "$cvml" run "$real/case" --input "$real/case/input.bin" --expect "$real/case/output.bin"
    cp "$real/case/input.bin" "$work/chain_input"
    expect 0 "$cvml" run "$real" --input "$work/chain_input" --expect "$real/result_0.txt"
    expect 0 "$cvml" info "$real/params" --brief
    contains "137396206" out
    expect 0 "$cvml" info "$real"
    contains "137396206" out
    expect 0 "$cvml" validate "$real/symbol" "$real/params"
    expect 0 "$cvml" save "$real" --out "$work/resnet"
    expect 0 "$cvml" run "$work/resnet" --input "$real/cpu.txt" --expect "$real/result_0.txt"
    ;;
*)
    echo "usage: tool_test.sh CVML SOURCE_DIR WORK_DIR usage|bundled|conformance|real" >&2
    exit 64
    ;;
esac
[ "$failures" = 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "tool tests ($mode) passed"
