#!/bin/sh
# Regenerates the bundled model from examples/build_and_run.c (builder API +
# cvml_graph_save_file) and its expected output. The expected output and gas are
# computed independently by the reference interpreter (../shared/tools/ref_interp.py)
# and must agree with cvm-lite's run.
# usage: examples/models/make_tiny_convnet.sh [BUILD_DIR [OUT_PREFIX]]
# BUILD_DIR defaults to build/release; OUT_PREFIX to the bundled files' own prefix.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build/release}
out=${2:-$here/tiny_convnet}
shared="$here/../../../shared"
for exe in "$build/examples/build_and_run" "$build/tools/cvml"; do
    [ -x "$exe" ] || { echo "make_tiny_convnet.sh: no $exe (build the tree first; usage: make_tiny_convnet.sh [BUILD_DIR [OUT_PREFIX]])" >&2; exit 2; }
done
[ -f "$shared/tools/ref_interp.py" ] || { echo "make_tiny_convnet.sh: no reference interpreter at $shared/tools" >&2; exit 2; }
"$build/examples/build_and_run" --save "$out"
"$build/tools/cvml" run "$out" --input "$out.input.bin" --output "$out.output.bin"
gas=$("$build/tools/cvml" info --json "$out" | sed -n 's/.*"total": *\([0-9]*\).*/\1/p')
/usr/bin/python3 - "$out" "$shared/tools" "$gas" <<'PY'
import json, sys
import numpy as np
prefix, tools, gas = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, tools)
import cvmfmt, ref_interp
g = json.load(open(prefix + ".json"))
params = [(n, a.astype(np.int64)) for n, a, _ in cvmfmt.load_params(open(prefix + ".params", "rb").read())]
data = np.fromfile(prefix + ".input.bin", dtype=np.int8).astype(np.int64)
data = np.clip(data, -127, 127)
outs = ref_interp.run_graph(g, params, data)
# Upstream writes int8 outputs when every output's precision is at most 8.
prec = g["attrs"]["precision"][1]
heads = [g["node_row_ptr"][n] + i for n, i, _ in g["heads"]]
ots = 1 if all(prec[e] <= 8 for e in heads) else 4
ref = ref_interp.serialize(outs, ots, g.get("postprocess", ""))
mine = open(prefix + ".output.bin", "rb").read()
if ref != mine:
    sys.exit("reference interpreter disagrees with cvm-lite's output")
values = np.frombuffer(ref, dtype="<i1" if ots == 1 else "<i4").tolist()
json.dump({"gas": gas, "output": values}, open(prefix + ".expected.json", "w"))
open(prefix + ".expected.json", "a").write("\n")
print("gas", gas, "output", values)
PY
