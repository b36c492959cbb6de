"""Float-graph rewrites before quantization, each exact in float arithmetic:
Identity and Dropout go, a zero Pad folds into the Conv or AveragePool that reads it,
and a BatchNormalization folds into the Conv before it when that Conv has no other
reader. What cannot be rewritten is reported by the quantizer."""
import numpy as np

from .errors import Problems


def simplify(graph):
    problems = Problems(graph.opset)
    _drop_identities(graph)
    _fold_pads(graph, problems)
    _fold_batchnorms(graph)
    problems.raise_if_any()
    return graph


def _rename_input(graph, old, new):
    for n in graph.nodes:
        n.inputs = [new if t == old else t for t in n.inputs]
    graph.outputs = [new if t == old else t for t in graph.outputs]


def _drop_identities(graph):
    kept = []
    for n in graph.nodes:
        if n.op in ("Identity", "Dropout"):
            _rename_input(graph, n.outputs[0], n.inputs[0])
            continue
        kept.append(n)
    graph.nodes = kept


def _fold_pads(graph, problems):
    users = graph.consumers()
    kept = []
    for n in graph.nodes:
        if n.op != "Pad":
            kept.append(n)
            continue
        pads = [int(p) for p in graph.consts[n.inputs[1]]]
        readers = users.get(n.outputs[0], [])
        r = len(pads) // 2
        spatial_only = r == 4 and pads[0] == pads[1] == pads[4] == pads[5] == 0
        foldable = spatial_only and readers and all(
            m.op in ("Conv", "AveragePool") for m in readers) and n.outputs[0] not in \
            graph.outputs
        if not foldable:
            problems.add(n, "a Pad is supported only on the two spatial axes and when every "
                         "reader is a Conv or AveragePool it folds into")
            kept.append(n)
            continue
        for m in readers:
            inner = list(m.attrs.get("pads", [0, 0, 0, 0]))
            m.attrs["pads"] = [inner[0] + pads[2], inner[1] + pads[3], inner[2] + pads[6],
                               inner[3] + pads[7]]
            if m.op == "AveragePool":
                m.attrs["count_include_pad"] = 1
            m.inputs = [n.inputs[0] if t == n.outputs[0] else t for t in m.inputs]
    graph.nodes = kept
    _recheck_pads(graph, problems)


def _recheck_pads(graph, problems):
    for n in graph.nodes:
        if n.op in ("Conv", "AveragePool", "MaxPool"):
            p = n.attrs.get("pads", [0, 0, 0, 0])
            if p[0] != p[2] or p[1] != p[3]:
                problems.add(n, "asymmetric pads %s are not supported (CVM pads both sides "
                             "equally)" % list(p))


def _fold_batchnorms(graph):
    users = graph.consumers()
    prod = graph.producers()
    kept = []
    for n in graph.nodes:
        if n.op == "BatchNormalization":
            conv = prod.get(n.inputs[0])
            if conv is not None and conv.op == "Conv" and len(users[n.inputs[0]]) == 1 and \
                    n.inputs[0] not in graph.outputs:
                _fold_into_conv(graph, conv, n)
                _rename_input(graph, n.outputs[0], conv.outputs[0])
                continue
        kept.append(n)
    graph.nodes = kept


def _fold_into_conv(graph, conv, bn):
    scale, bias, mean, var = (graph.consts[t].astype(np.float64) for t in bn.inputs[1:5])
    a = scale / np.sqrt(var + bn.attrs.get("epsilon", 1e-5))
    w = graph.consts[conv.inputs[1]].astype(np.float64)
    b = graph.consts[conv.inputs[2]].astype(np.float64) if len(conv.inputs) > 2 and \
        conv.inputs[2] else np.zeros(w.shape[0])
    wname, bname = conv.name + ".folded_weight", conv.name + ".folded_bias"
    graph.consts[wname] = (w * a.reshape(-1, 1, 1, 1)).astype(np.float32)
    graph.consts[bname] = ((b - mean) * a + bias).astype(np.float32)
    conv.inputs = [conv.inputs[0], wname, bname]
