"""What --report and --evaluate print. Both run the converted model in cvm-lite
itself (through the binding), so every integer figure comes from the runtime's own
output bytes, never from a simulation."""
import copy

import numpy as np

from . import quantize_input

UPLOAD_LIMIT = 512 * 1024   # a Cortex upload transaction


def _model(result, graph_json, threads=None):
    import cvml  # the binding: needs libcvml
    return cvml.Model.from_bytes(graph_json, result.params, threads=threads)


def gas_lines(result, model_gas):
    ops, mem, glue = result.cvm.gas()
    total = ops + mem
    lines = ["gas: %d (operations %d, memory %d); requantization glue %d (%.1f%%)"
             % (total, ops, mem, glue, 100.0 * glue / max(total, 1))]
    if model_gas is not None and model_gas != total:
        lines.append("gas: cvm-lite charges %d for the loaded model" % model_gas)
    size = len(result.params)
    note = "" if size <= UPLOAD_LIMIT else "; over the 512 KB of a Cortex upload transaction"
    lines.append("params: %d bytes (%d tensors)%s" % (size, len(result.cvm.params), note))
    return lines


def _layer_tensors(result):
    """(float tensor, op type, QT) for each node output that became an integer tensor."""
    q = result.quantizer
    out = []
    for n in result.graph.nodes:
        t = n.outputs[0]
        if t in q.q and q.q[t] is not None:
            out.append((t, n.op, q.q[t]))
    return out


def _dequantize(values, qt):
    s = qt.scale
    if qt.per_channel:
        s = s.reshape((1, -1) + (1,) * (values.ndim - 2))
    return values.astype(np.float64) * s


def layer_table(result, images, threads=None):
    """Per layer, float against integer over the images: SQNR (dB) and cosine."""
    layers = _layer_tensors(result)
    dbg = copy.copy(result.cvm)
    dbg.heads = list(result.cvm.heads) + [qt.entry for _, _, qt in layers]
    first = len(result.cvm.heads)
    signal = np.zeros(len(layers))  # sum of float^2
    noise = np.zeros(len(layers))   # sum of (float - integer)^2
    dot = np.zeros(len(layers))     # sum of float * integer
    ni = np.zeros(len(layers))      # sum of integer^2
    with _model(result, dbg.graph_json(), threads) as m:
        for x in images:
            x = x[None]
            env = result.graph.run(x)
            outs = m.run(quantize_input(x, result.input_scale))
            for k, (name, _, qt) in enumerate(layers):
                f = env[name].astype(np.float64).ravel()
                i = _dequantize(outs[first + k], qt).ravel()
                signal[k] += f @ f
                noise[k] += (f - i) @ (f - i)
                dot[k] += f @ i
                ni[k] += i @ i
    lines = ["%-40s %-18s %6s %9s %8s" % ("tensor", "op", "bits", "sqnr_db", "cosine")]
    for k, (name, op, qt) in enumerate(layers):
        sqnr = 10 * np.log10(signal[k] / noise[k]) if noise[k] > 0 else float("inf")
        cos = dot[k] / np.sqrt(signal[k] * ni[k]) if signal[k] > 0 and ni[k] > 0 else 1.0
        lines.append("%-40s %-18s %6d %9.2f %8.5f" % (name[-40:], op, qt.prec, sqnr, cos))
    return lines


def evaluate(result, x, labels, threads=None, batch=200):
    """(float top-1, cvm top-1, agreement, images): the float model by the numpy
    evaluator, the converted one by cvm-lite."""
    x = np.asarray(x, np.float32)
    labels = np.asarray(labels).astype(np.int64).ravel()
    if len(x) != len(labels):
        raise ValueError("%d inputs but %d labels" % (len(x), len(labels)))
    out_name = result.graph.outputs[0]
    f_pred = np.concatenate([result.graph.run(x[i:i + batch])[out_name].reshape(
        len(x[i:i + batch]), -1).argmax(axis=1) for i in range(0, len(x), batch)])
    c_pred = cvm_predictions(result, x, threads)
    n = len(x)
    return (float((f_pred == labels).mean()), float((c_pred == labels).mean()),
            float((f_pred == c_pred).mean()), n)


def cvm_predictions(result, x, threads=None):
    q = quantize_input(x, result.input_scale)
    preds = np.empty(len(x), np.int64)
    with _model(result, result.graph_json, threads) as m:
        for i in range(len(x)):
            (o,) = m.run(q[i:i + 1])[:1]
            preds[i] = int(np.argmax(o.reshape(-1)))
    return preds


def evaluate_line(f, c, a, n):
    return "evaluate: float_top1 %.4f cvm_top1 %.4f agreement %.4f images %d" % (f, c, a, n)
