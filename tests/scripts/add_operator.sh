#!/bin/sh
# Adding an operator is adding its files: copies the tree to a scratch folder, adds an
# operator definition and its CPU kernel as two new files (tests/registry/), edits no
# other file, configures with CVML_OPERATORS limited to that operator and relu, builds the
# cvml tool and runs a model of the two. Then checks the subset build: `cvml info` prints
# the list to paste, and a model needing an operator the build left out fails to load
# with a runtime error naming it.
# usage: add_operator.sh SOURCE_DIR WORK_DIR [CMAKE_ARGS...]
set -u
src=$1 work=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work/tree"
for item in CMakeLists.txt api cmake examples source tools; do
    cp -R "$src/$item" "$work/tree/" || fail "cannot copy $item"
done
cp "$src/tests/registry/scratch_twice_op.cpp" "$work/tree/source/operator/scratch_twice.cpp"
cp "$src/tests/registry/scratch_twice_kernel.cpp" \
    "$work/tree/source/device/cpu/op/scratch_twice.cpp"

cmake -S "$work/tree" -B "$work/build" -DCMAKE_BUILD_TYPE=Debug -DCVML_BUILD_TESTS=OFF \
    -DCVML_WITH_CUDA=OFF "-DCVML_OPERATORS=relu;scratch_twice" "$@" > "$work/configure.log" 2>&1 ||
    { tail -20 "$work/configure.log"; fail "configure"; }
cmake --build "$work/build" --target cvml cvml_tool -j2 > "$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; fail "build"; }
cvml=$work/build/tools/cvml

# A model: data (1,4,4,3) precision 4 -> relu -> scratch_twice; the relu conformance
# case's input, so the output must be twice that case's expected output.
relu_case=$src/tests/conformance/cases/009_relu
mkdir -p "$work/model"
cp "$relu_case/input.bin" "$relu_case/model.params" "$work/model/"
cat > "$work/model/model.json" <<'JSON'
{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "cvm_op", "name": "relu_0", "inputs": [[0, 0, 0]],
     "attrs": {"flatten_data": "0", "func_name": "relu", "num_inputs": "1", "num_outputs": "1"}},
    {"op": "cvm_op", "name": "scratch_twice_1", "inputs": [[1, 0, 0]],
     "attrs": {"flatten_data": "0", "func_name": "scratch_twice", "num_inputs": "1",
               "num_outputs": "1"}}
  ],
  "arg_nodes": [0],
  "node_row_ptr": [0, 1, 2, 3],
  "heads": [[2, 0, 0]],
  "attrs": {
    "op_attrs": ["list_str", ["{\"precision\": \"4\", \"shape\": \"(1, 4, 4, 3)\"}", "{}", "{}"]],
    "dltype": ["list_str", ["int32", "int32", "int32"]],
    "precision": ["list_int", [4, -1, -1]],
    "storage_id": ["list_int", [1, 0, 2]],
    "shape": ["list_shape", [[1, 4, 4, 3], [1, 4, 4, 3], [1, 4, 4, 3]]]
  },
  "version": "cvm_1.0.0"
}
JSON

want=$(od -An -v -td1 "$relu_case/output.bin" | tr -s ' \n' '\n\n' | sed '/^$/d' |
    awk '{ printf "%s%d", (NR > 1 ? " " : ""), 2 * $1 }')
got=$("$cvml" run "$work/model" --input "$work/model/input.bin" 2> "$work/err") ||
    { cat "$work/err"; fail "cvml run of the new operator"; }
[ "$got" = "$want" ] || fail "scratch_twice printed '$got', want '$want'"
echo "new operator ran: $got"

"$cvml" info --brief "$work/model" > "$work/info" 2>&1 || { cat "$work/info"; fail "cvml info"; }
grep -q -- '-DCVML_OPERATORS="relu;scratch_twice"' "$work/info" ||
    { cat "$work/info"; fail "cvml info did not print the operator list"; }

# conv2d was left out of this build: loading a model that needs it says so.
"$cvml" run "$src/tests/conformance/cases/000_conv2d_basic" \
    --input "$src/tests/conformance/cases/000_conv2d_basic/input.bin" > /dev/null 2> "$work/err"
rc=$?
[ "$rc" = 2 ] || { cat "$work/err"; fail "conv2d model in a relu-only build: exit $rc (want 2)"; }
grep -q "Operator conv2d is not registered: this build left it out (CVML_OPERATORS)" "$work/err" ||
    { cat "$work/err"; fail "the error does not name the left-out operator"; }
echo "left-out operator: $(cat "$work/err")"
echo "ok"
