"""Building a CVM graph: nodes, parameters, the precision each operator infers, the
storage plan, and the two files (graph JSON in upstream's cvm_1.0.0 layout and the
params blob).

Precisions here follow the verifier's rules (docs/operators.md) exactly: the
quantizer relies on them to prove every conv2d and dense operand within 8 bits and
every intermediate within 32, and cvm-lite re-infers them at load.
"""
import json
import struct

import numpy as np

PARAMS_MAGIC = 0xF7E58D4F05049CB7
ARRAY_MAGIC = 0xDD5E40F096B4A13F
# Operators whose output may share its input's storage slot (upstream's in-place list).
IN_PLACE = {"flatten", "relu", "expand_dims", "reshape", "squeeze", "abs", "cvm_precision",
            "elemwise_add", "elemwise_sub", "clip", "cvm_clip", "cvm_right_shift"}


def bits(n):
    """Bit length of a non-negative integer (upstream's GetReduceSumBit)."""
    return int(n).bit_length()


def precision_of_values(a):
    """The smallest p with |v| <= 2^(p-1) - 1 for every value."""
    m = int(np.abs(np.asarray(a, dtype=np.int64)).max()) if np.size(a) else 0
    return bits(m) + 1


def bound(p):
    return (1 << (p - 1)) - 1


def _tuple(v):
    return "(" + ", ".join(str(int(x)) for x in v) + ")" if len(v) != 1 else "(%d,)" % v[0]


class Entry:
    """One tensor of the CVM graph: its node id, shape and inferred precision."""

    def __init__(self, nid, shape, prec):
        self.nid, self.shape, self.prec = nid, tuple(int(d) for d in shape), prec

    @property
    def size(self):
        return int(np.prod(self.shape))


class CvmGraph:
    def __init__(self):
        self.nodes = []    # dicts: op, name, func, attrs, inputs, kind
        self.entries = []  # Entry per node (every emitted op has one output)
        self.params = {}   # name -> int array
        self.heads = []
        self.counts = {}

    # ---- building --------------------------------------------------------------
    def _add(self, node, shape, prec):
        if any(d < 1 or d > 1 << 24 for d in shape) or int(np.prod(shape)) > 1 << 30 or \
                not 1 <= len(shape) <= 6:
            raise ValueError("shape %s is outside CVM's limits" % list(shape))
        if not 1 <= prec <= 32:
            raise ValueError("precision %d outside 1..32 at %s" % (prec, node["name"]))
        node["id"] = len(self.nodes)
        self.nodes.append(node)
        e = Entry(node["id"], shape, prec)
        self.entries.append(e)
        return e

    def input(self, shape, prec):
        return self._add({"op": "null", "name": "data", "inputs": [], "kind": "input"}, shape,
                         prec)

    def param(self, name, values):
        values = np.asarray(values, dtype=np.int64)
        if np.abs(values).max(initial=0) > bound(32):
            raise ValueError("parameter %s does not fit 32 bits" % name)
        if name in self.params or name == "data":
            raise ValueError("parameter name %s used twice" % name)
        self.params[name] = values.astype(np.int32)
        return self._add({"op": "null", "name": name, "inputs": [], "kind": "param"},
                         values.shape, precision_of_values(values))

    def op(self, func, inputs, attrs, shape, prec, kind="compute"):
        k = self.counts.get(func, 0)
        self.counts[func] = k + 1
        node = {"op": "cvm_op", "name": "%s_%d" % (func, k), "func": func,
                "attrs": {key: str(v) for key, v in attrs.items()},
                "inputs": [e.nid for e in inputs], "kind": kind}
        return self._add(node, shape, prec)

    # ---- the operators the converter emits, with their precision rules ----------
    def conv2d(self, x, w, b, strides, padding, dilation, groups):
        o, cg, kh, kw = w.shape
        n, c, h, wd = x.shape
        oh = (h + 2 * padding[0] - ((kh - 1) * dilation[0] + 1)) // strides[0] + 1
        ow = (wd + 2 * padding[1] - ((kw - 1) * dilation[1] + 1)) // strides[1] + 1
        assert x.prec <= 8 and w.prec <= 8, "conv2d operands must be within 8 bits"
        p = x.prec + w.prec + bits(cg * kh * kw)
        if b is not None:
            p = max(p, b.prec) + 1
        attrs = {"channels": o, "kernel_size": _tuple((kh, kw)), "strides": _tuple(strides),
                 "padding": _tuple(padding), "dilation": _tuple(dilation), "groups": groups,
                 "use_bias": "True" if b is not None else "False"}
        ins = [x, w] + ([b] if b is not None else [])
        return self.op("conv2d", ins, attrs, (n, o, oh, ow), p)

    def dense(self, x, w, b):
        assert x.prec <= 8 and w.prec <= 8, "dense operands must be within 8 bits"
        p = x.prec + w.prec + bits(x.shape[1])
        if b is not None:
            p = max(p, b.prec) + 1
        attrs = {"units": w.shape[0], "use_bias": "True" if b is not None else "False"}
        ins = [x, w] + ([b] if b is not None else [])
        return self.op("dense", ins, attrs, (x.shape[0], w.shape[0]), p)

    def right_shift(self, x, shift, prec, kind="glue"):
        # Upstream skips the clip when precision + shift_bit >= 32: never emit that.
        assert 1 <= shift <= 30 and prec + shift < 32, (shift, prec)
        return self.op("cvm_right_shift", [x], {"precision": prec, "shift_bit": shift},
                       x.shape, prec, kind)

    def cvm_clip(self, x, prec, kind="glue"):
        return self.op("cvm_clip", [x], {"precision": prec}, x.shape, prec, kind)

    def broadcast(self, func, a, b, kind="glue"):
        shape = np.broadcast_shapes(a.shape, b.shape)
        if func == "broadcast_mul":
            p = a.prec + b.prec
        elif func in ("broadcast_add", "broadcast_sub"):
            p = max(a.prec, b.prec) + 1
        else:  # broadcast_div
            p = a.prec
        return self.op(func, [a, b], {}, shape, p, kind)

    def elemwise_add(self, a, b):
        return self.op("elemwise_add", [a, b], {}, a.shape, max(a.prec, b.prec) + 1)

    def unary(self, func, x, kind="compute"):
        return self.op(func, [x], {}, x.shape, x.prec, kind)

    def max_pool2d(self, x, pool, strides, padding, ceil_mode, shape):
        attrs = {"pool_size": _tuple(pool), "strides": _tuple(strides),
                 "padding": _tuple(padding), "ceil_mode": "True" if ceil_mode else "False"}
        return self.op("max_pool2d", [x], attrs, shape, x.prec)

    def reduce(self, func, x, axes, keepdims, shape):
        attrs = {"axis": _tuple(axes), "keepdims": "True" if keepdims else "False"}
        p = x.prec
        if func == "sum":
            p += bits(x.size // int(np.prod(shape)))
        return self.op(func, [x], attrs, shape, p)

    def reshape(self, x, shape):
        return self.op("reshape", [x], {"shape": _tuple(shape)}, shape, x.prec)

    def flatten(self, x):
        return self.op("flatten", [x], {}, (x.shape[0], x.size // x.shape[0]), x.prec)

    def transpose(self, x, perm):
        shape = tuple(x.shape[i] for i in perm)
        return self.op("transpose", [x], {"axes": _tuple(perm)}, shape, x.prec)

    def concatenate(self, xs, axis, shape):
        return self.op("concatenate", xs, {"axis": axis}, shape, max(x.prec for x in xs))

    def upsampling(self, x, scale):
        n, c, h, w = x.shape
        return self.op("upsampling", [x], {"scale": scale}, (n, c, h * scale, w * scale),
                       x.prec)

    def lut(self, x, table):
        return self.op("cvm_lut", [x, table], {"in_dim": table.shape[0]}, x.shape, table.prec)

    # ---- writing -----------------------------------------------------------------
    def _storage_ids(self):
        """Slots by liveness: an op's output takes a free slot that none of its own
        inputs holds (upstream's storage-reuse rule), preferring the smallest slot
        that is large enough; variables and heads keep their own slots."""
        last_use = {}
        for n in self.nodes:
            for i in n["inputs"]:
                last_use[i] = n["id"]
        heads = {h.nid for h in self.heads}
        slot_of, slot_size, free = {}, [], []
        for n in self.nodes:
            e = self.entries[n["id"]]
            need = 4 * e.size
            if n["op"] == "null":
                slot_of[n["id"]] = len(slot_size)
                slot_size.append(need)
                continue
            taken = {slot_of[i] for i in n["inputs"]}
            fits = [s for s in free if s not in taken]
            if fits:
                big = [s for s in fits if slot_size[s] >= need]
                s = min(big, key=lambda s: (slot_size[s], s)) if big else max(
                    fits, key=lambda s: (slot_size[s], -s))
                free.remove(s)
                slot_size[s] = max(slot_size[s], need)
            else:
                s = len(slot_size)
                slot_size.append(need)
            slot_of[n["id"]] = s
            for i in set(n["inputs"]):
                if last_use.get(i) == n["id"] and i not in heads and \
                        self.nodes[i]["op"] != "null":
                    free.append(slot_of[i])
        return [slot_of[n["id"]] for n in self.nodes]

    def graph_json(self):
        nodes, op_attrs = [], []
        for n in self.nodes:
            e = self.entries[n["id"]]
            if n["op"] == "null":
                nodes.append({"op": "null", "name": n["name"], "inputs": []})
                op_attrs.append(json.dumps({"precision": str(e.prec),
                                            "shape": _tuple(e.shape)}))
                continue
            nodes.append({"op": "cvm_op", "name": n["name"],
                          "attrs": {"flatten_data": "0", "func_name": n["func"],
                                    "num_inputs": str(len(n["inputs"])),
                                    "num_outputs": "1"},
                          "inputs": [[i, 0, 0] for i in n["inputs"]]})
            op_attrs.append(json.dumps(n["attrs"], sort_keys=True))
        count = len(self.nodes)
        doc = {
            "nodes": nodes,
            "arg_nodes": [n["id"] for n in self.nodes if n["op"] == "null"],
            "node_row_ptr": list(range(count + 1)),
            "heads": [[h.nid, 0, 0] for h in self.heads],
            "attrs": {
                "op_attrs": ["list_str", op_attrs],
                "dltype": ["list_str", ["int32"] * count],
                "precision": ["list_int", [e.prec for e in self.entries]],
                "storage_id": ["list_int", self._storage_ids()],
                "shape": ["list_shape", [list(e.shape) for e in self.entries]],
            },
            "version": "cvm_1.0.0",
        }
        return _dump(doc)

    def params_blob(self):
        """The params dictionary; arrays whose values fit int8 are stored as int8
        (upstream sign-extends them), the rest as int32."""
        names = [n["name"] for n in self.nodes if n.get("kind") == "param"]
        out = [struct.pack("<QQQ", PARAMS_MAGIC, 0, len(names))]
        for name in names:
            raw = name.encode()
            out.append(struct.pack("<Q", len(raw)) + raw)
        out.append(struct.pack("<Q", len(names)))
        for name in names:
            a = self.params[name]
            small = a.size and np.abs(a).max() <= 127
            data = a.astype("<i1" if small else "<i4").tobytes()
            out.append(struct.pack("<QQiii", ARRAY_MAGIC, 0, 1, 0, a.ndim))
            out.append(struct.pack("<BBH", 0, 8 if small else 32, 1))
            out.append(struct.pack("<%dq" % a.ndim, *a.shape))
            out.append(struct.pack("<q", len(data)) + data)
        return b"".join(out)

    # ---- facts -------------------------------------------------------------------
    def gas(self):
        """(operations, memory, glue operations) as docs/operators.md defines gas."""
        ops = mem = glue = 0
        for n in self.nodes:
            e = self.entries[n["id"]]
            mem += 5 * e.size
            if n["op"] == "null":
                continue
            base = self._gas_base(n)
            ops += base * e.size
            if n["kind"] == "glue":
                glue += base * e.size + 5 * e.size
        return ops, mem, glue

    def _gas_base(self, n):
        f, ins = n["func"], [self.entries[i] for i in n["inputs"]]
        if f == "conv2d":
            w = ins[1]
            return 3 * w.size // w.shape[0] + (1 if len(ins) > 2 else 0)
        if f == "dense":
            return 3 * ins[1].shape[1] + (1 if len(ins) > 2 else 0)
        if f == "max_pool2d":
            return int(np.prod([int(v) for v in n["attrs"]["pool_size"].strip("()").split(
                ",") if v.strip()]))
        if f == "sum":
            return ins[0].size // self.entries[n["id"]].size
        return 1


def _dump(doc):
    """JSON with one node or attribute list item per line: readable and stable."""
    lines = ["{", '  "nodes": [']
    lines.append(",\n".join("    " + json.dumps(n) for n in doc["nodes"]))
    lines.append("  ],")
    for key in ("arg_nodes", "node_row_ptr", "heads"):
        lines.append('  "%s": %s,' % (key, json.dumps(doc[key])))
    lines.append('  "attrs": {')
    items = []
    for key, (tag, values) in doc["attrs"].items():
        if key == "op_attrs":
            body = ",\n".join("      " + json.dumps(v) for v in values)
            items.append('    "%s": ["%s", [\n%s]]' % (key, tag, body))
        else:
            items.append('    "%s": ["%s", %s]' % (key, tag, json.dumps(values)))
    lines.append(",\n".join(items))
    lines.append("  },")
    lines.append('  "version": "%s"' % doc["version"])
    lines.append("}")
    return "\n".join(lines) + "\n"
