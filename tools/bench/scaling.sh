#!/usr/bin/env bash
# How a model's convolutions scale from one thread to two, node by node, and the
# depthwise ones (conv2d with groups > 1) in all: the measure of issue 34's "depthwise
# layers scale >= 1.8x on 2 threads (per-node profile)".
#   tools/bench/scaling.sh [CVML=build/release/tools/cvml] [MODEL=mobilenet] [ROUNDS=4] [SIMD]
#
# MODEL is a built-in benchmark model (cvml bench --model). SIMD (scalar, avx2, avx512,
# ...) sets CVML_SIMD; by default the CPU's best level. One and two threads run in
# interleaved rounds (1, 2, 1, 2, ...) of 30 profiled runs each (`cvml bench --profile
# --nodes`), so a machine whose speed drifts drifts for both; a node's time is its
# lowest over the rounds, the least disturbed one: of each round's mean, or with
# STAT=fastest of each round's fastest run (the profile's `min ms`), which moves less on
# a machine whose other tenants slow it down now and then (the shared VM the figures in
# docs/ come from; a slowdown lasting a whole round moves both). The groups of each
# conv2d come from the model saved as CVM JSON (`cvml bench --save`).
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: tools/bench/scaling.sh [CVML] [MODEL] [ROUNDS] [SIMD]"
tool=${1:-build/release/tools/cvml}
model=${2:-mobilenet}
rounds=${3:-4}
simd=${4:-}
stat=${STAT:-mean}
[[ $stat == mean || $stat == fastest ]] || { echo "scaling: STAT must be mean or fastest" >&2; exit 2; }
column=3
[[ $stat == fastest ]] && column=6
[[ -x $tool ]] || { echo "scaling: no cvml tool at $tool ($usage)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "scaling: ROUNDS must be a positive count ($usage)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tool" bench --model "$model" --save "$work" >/dev/null

simd_args=()
[[ -n $simd ]] && simd_args=(--simd "$simd")
for ((round = 1; round <= rounds; round++)); do
  for threads in 1 2; do
    # Node lines of the profile: name, operator, ms, ...
    "$tool" bench --model "$model" "${simd_args[@]}" --threads "$threads" --runs 30 --profile \
      --nodes | awk -v t="$threads" -v c="$column" '$2 == "conv2d" {print t, $1, $c}' >>"$work/times"
  done
done

python3 - "$work/$model.json" "$work/times" "$model" "${simd:-best}" "$stat" <<'EOF'
import json
import sys

graph, times, model, simd, stat = sys.argv[1:6]
# The CVM graph keeps each node's operator attributes in attrs.op_attrs, a JSON string a
# node (the format the benchmark saves: ../shared/spec/FORMAT.md).
g = json.load(open(graph))
op_attrs = g["attrs"]["op_attrs"][1]
groups = {}
for i, node in enumerate(g["nodes"]):
    if node.get("attrs", {}).get("func_name") == "conv2d":
        groups[node["name"]] = int(json.loads(op_attrs[i]).get("groups", "1"))

best = {1: {}, 2: {}}
order = []  # the nodes in graph order
for line in open(times):
    threads, name, ms = line.split()
    table = best[int(threads)]
    if int(threads) == 1 and name not in table:
        order.append(name)
    table[name] = min(table.get(name, float("inf")), float(ms))

what = "round means" if stat == "mean" else "fastest runs"
print(f"{model}, SIMD {simd}: conv2d nodes, lowest of the {what} over the rounds")
print("| node | groups | 1 thread | 2 threads | scaling |")
print("|---|---|---|---|---|")
total = {"depthwise": [0.0, 0.0], "other": [0.0, 0.0]}
for name in order:
    one, two = best[1][name], best[2].get(name)
    if two is None:
        continue
    g = groups.get(name, 1)
    kind = "depthwise" if g > 1 else "other"
    total[kind][0] += one
    total[kind][1] += two
    print(f"| {name} | {g} | {one:.4f} | {two:.4f} | {one / two:.2f}x |")
for kind, (one, two) in total.items():
    if two > 0:
        print(f"{kind} conv2d in all: {one:.3f} -> {two:.3f} ms, {one / two:.2f}x")
EOF
