"""Reading a float ONNX model into the converter's float graph.

The float graph is a list of nodes in topological order over named tensors, with
the constant tensors (initializers and everything that folds from them) kept apart.
Reading checks the whole model first and reports every unsupported node at once.
"""
import numpy as np

from . import float_ops as F
from .errors import ConvertError, Problems

OPSETS = range(11, 18)

# What each operator must look like to be converted (checked in _check_node).
SUPPORTED = {
    "Conv", "BatchNormalization", "Relu", "Clip", "Add", "Sub", "Mul", "Div", "MaxPool",
    "AveragePool", "GlobalAveragePool", "Flatten", "Reshape", "Gemm", "Concat", "Resize",
    "Sigmoid", "Softmax", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Pad",
    "Shape", "Gather", "Constant", "Dropout", "Cast",
}
# Operators that are converted only when they fold into constants.
CONSTANT_ONLY = {"Shape", "Gather", "Constant", "Cast"}


class Node:
    def __init__(self, name, op, inputs, outputs, attrs):
        self.name, self.op = name, op
        self.inputs, self.outputs, self.attrs = list(inputs), list(outputs), dict(attrs)

    def __repr__(self):
        return "Node(%s %s %s->%s)" % (self.name, self.op, self.inputs, self.outputs)


class FloatGraph:
    """The model: nodes in order, constants, the one input and the outputs."""

    def __init__(self, nodes, consts, input_name, input_shape, outputs, opset):
        self.nodes, self.consts = nodes, consts
        self.input_name, self.input_shape = input_name, tuple(input_shape)
        self.outputs, self.opset = list(outputs), opset
        self.shapes = {}

    @property
    def batch(self):
        return self.input_shape[0]

    def producers(self):
        return {t: n for n in self.nodes for t in n.outputs}

    def consumers(self):
        users = {}
        for n in self.nodes:
            for t in n.inputs:
                if t:
                    users.setdefault(t, []).append(n)
        return users

    # ---- evaluation ------------------------------------------------------------
    def run(self, x, keep=None):
        """Runs the float model on x (a batch of inputs). Returns the values of the
        outputs, and of every tensor when keep is None; keep(name, value) may also
        consume each tensor as it is made (calibration), and then nothing is kept."""
        env = {self.input_name: np.asarray(x, dtype=np.float32)}
        users_left = {}
        for n in self.nodes:
            for t in n.inputs:
                users_left[t] = users_left.get(t, 0) + 1
        for n in self.nodes:
            args = [self._value(env, t) for t in n.inputs]
            outs = evaluate(n, args, self.opset, self.batch)
            for name, v in zip(n.outputs, outs):
                env[name] = v
                if keep is not None:
                    keep(name, v)
            if keep is not None:
                for t in n.inputs:
                    users_left[t] -= 1
                    if users_left[t] == 0 and t not in self.outputs and t in env:
                        del env[t]
        return env

    def _value(self, env, t):
        if not t:
            return None
        if t in env:
            return env[t]
        return self.consts[t]


def _grown_shape(node, args):
    """The output shape of the operators whose output can outgrow their inputs, known
    before computing it, or None."""
    op = node.op
    if op == "Conv":
        x, w = args[0], args[1]
        k, st, dl, p = F.conv_attrs(node, w.shape)
        return [x.shape[0], w.shape[0]] + [
            max(0, (x.shape[2 + i] + p[i] + p[i + 2] - (k[i] - 1) * dl[i] - 1) // st[i] + 1)
            for i in range(2)]
    if op in ("Add", "Sub", "Mul", "Div"):
        try:
            return list(np.broadcast_shapes(np.shape(args[0]), np.shape(args[1])))
        except ValueError:
            raise ConvertError("node %s (%s): the inputs' shapes %s and %s do not broadcast"
                               % (node.name, op, list(np.shape(args[0])),
                                  list(np.shape(args[1]))))
    return None


def evaluate(node, args, opset, model_batch):
    """One node's outputs (a list) from its input values."""
    op = node.op
    grown = _grown_shape(node, args)
    if grown is not None:
        per_batch = [1] + list(grown[1:]) if grown else grown
        check_shape("node %s (%s) output" % (node.name, op), per_batch or [1])
    if op == "Conv":
        return [F.op_conv(node, *args)]
    if op == "BatchNormalization":
        return [F.op_batchnorm(node, *args[:5])]
    if op == "Relu":
        return [np.maximum(args[0], 0)]
    if op == "Clip":
        return [F.op_clip(node, *args)]
    if op == "Sigmoid":
        return [(1.0 / (1.0 + np.exp(-args[0]))).astype(np.float32)]
    if op == "Add":
        return [args[0] + args[1]]
    if op == "Sub":
        return [args[0] - args[1]]
    if op == "Mul":
        return [args[0] * args[1]]
    if op == "Div":
        return [args[0] / args[1]]
    if op == "MaxPool":
        return [F.op_maxpool(node, args[0])]
    if op == "AveragePool":
        return [F.op_averagepool(node, args[0])]
    if op == "GlobalAveragePool":
        return [F.op_global_average_pool(node, args[0])]
    if op == "Flatten":
        return [F.op_flatten(node, args[0])]
    if op == "Reshape":
        return [F.batch_reshape(args[0], args[1], model_batch)]
    if op == "Gemm":
        return [F.op_gemm(node, *args)]
    if op == "Concat":
        return [np.concatenate(args, axis=node.attrs["axis"])]
    if op == "Resize":
        scales = resize_scales(node, args, opset)
        out = [int(d * s) for d, s in zip(args[0].shape, scales)]
        check_shape("node %s (Resize) output" % node.name, out)
        return [F.op_resize(node, args[0], scales)]
    if op == "Softmax":
        return [F.op_softmax(node, args[0], opset)]
    if op == "Transpose":
        perm = node.attrs.get("perm")
        return [np.transpose(args[0], perm)]
    if op == "Squeeze":
        return [F.op_squeeze(node, args[0], F.axes_of(node, _opt(args, 1), opset))]
    if op == "Unsqueeze":
        return [F.op_unsqueeze(node, args[0], F.axes_of(node, _opt(args, 1), opset))]
    if op in ("Identity", "Dropout"):
        return [args[0]] + ([np.ones(args[0].shape, bool)] if len(node.outputs) > 1 else [])
    if op == "Shape":
        return [np.array(args[0].shape, dtype=np.int64)]
    if op == "Gather":
        return [F.op_gather(node, args[0], args[1])]
    if op == "Cast":
        return [args[0].astype(_ONNX_DTYPES.get(node.attrs["to"], np.float32))]
    if op == "Constant":
        return [node.attrs["value"]]
    if op == "Pad":
        return [np.pad(args[0], pad_widths(node, args, opset))]
    raise ConvertError("node %s (%s): no float evaluation" % (node.name, op))


_ONNX_DTYPES = {1: np.float32, 6: np.int32, 7: np.int64, 11: np.float64}


def _opt(args, i):
    return args[i] if len(args) > i else None


def resize_scales(node, args, opset):
    """The four scales of a Resize, from its scales or sizes input."""
    scales = _opt(args, 2)
    sizes = _opt(args, 3)
    if scales is not None and np.size(scales):
        return [float(s) for s in scales]
    x = args[0]
    return [float(s) / d for s, d in zip(sizes, x.shape)]


def pad_widths(node, args, opset):
    pads = [int(p) for p in _opt(args, 1)]
    r = len(pads) // 2
    return [(pads[i], pads[i + r]) for i in range(r)]


# ---- reading ---------------------------------------------------------------------

def load(path):
    """Reads an ONNX file into a FloatGraph, or raises ConvertError naming every
    problem found."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError as e:  # pragma: no cover - install_deps.sh installs python3-onnx
        raise ConvertError("the converter needs python3-onnx: %s" % e)
    try:
        model = onnx.load(path)
        onnx.checker.check_model(model)
    except Exception as e:  # noqa: BLE001 - the ONNX library's errors vary by version
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConvertError("%s: not a readable ONNX model: %s" % (path, reason))
    return from_proto(model, numpy_helper, onnx.helper)


def from_proto(model, numpy_helper, helper):
    opset = _default_opset(model)
    if opset not in OPSETS:
        raise ConvertError("the model's opset %d is not supported (opsets %d to %d are)"
                           % (opset, OPSETS[0], OPSETS[-1]))
    g = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    inputs = [i for i in g.input if i.name not in consts]
    problems = Problems(opset)
    if len(inputs) != 1:
        raise ConvertError("the model has %d inputs; a CVM model has exactly one"
                           % len(inputs))
    input_shape = _fixed_shape(inputs[0], problems)
    nodes = []
    for i, p in enumerate(g.node):
        attrs = {a.name: _attr_value(a, helper, numpy_helper) for a in p.attribute}
        nodes.append(Node(p.name or "%s_%d" % (p.op_type, i), p.op_type, p.input, p.output,
                          attrs))
    for n in nodes:
        _check_node(n, consts, opset, problems)
    problems.raise_if_any()
    graph = FloatGraph(nodes, consts, inputs[0].name, input_shape,
                       [o.name for o in g.output], opset)
    _fold_constants(graph)
    _check_after_folding(graph, problems)
    problems.raise_if_any()
    return graph


def _default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 0


def _fixed_shape(value_info, problems):
    dims = value_info.type.tensor_type.shape.dim
    shape = []
    for d in dims:
        if not d.HasField("dim_value") or d.dim_value <= 0:
            problems.add_text("input %s: dimension %s is not fixed (a CVM model has a fixed "
                              "shape; export with a fixed batch)"
                              % (value_info.name, d.dim_param or "?"))
            return ()
        shape.append(d.dim_value)
    if not shape:
        problems.add_text("input %s: no shape" % value_info.name)
    return tuple(shape)


def _attr_value(a, helper, numpy_helper):
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "dims") and hasattr(v, "data_type"):  # a TensorProto (Constant)
        return numpy_helper.to_array(v)
    if isinstance(v, list):
        return [x.decode() if isinstance(x, bytes) else x for x in v]
    return v


def _symmetric(pads):
    r = len(pads) // 2
    return all(pads[i] == pads[i + r] for i in range(r))


def _check_node(n, consts, opset, problems):
    """Adds a problem for each thing about n the converter cannot convert."""
    op, a = n.op, n.attrs
    if op not in SUPPORTED:
        problems.add(n, "operator %s is not supported" % op)
        return
    if op in ("Conv", "MaxPool", "AveragePool") and a.get("auto_pad", "NOTSET") not in (
            "NOTSET", "VALID"):
        problems.add(n, "auto_pad=%s is not supported (export with explicit pads)"
                     % a["auto_pad"])
    if op in ("Conv", "MaxPool", "AveragePool"):
        pads = a.get("pads", [0, 0, 0, 0])
        kernel = a.get("kernel_shape")
        if kernel is not None and len(kernel) != 2:
            problems.add(n, "only 2-D kernels are supported (kernel_shape %s)" % list(kernel))
        elif not _symmetric(pads):
            problems.add(n, "asymmetric pads %s are not supported (CVM pads both sides "
                         "equally)" % list(pads))
    if op == "Conv":
        if n.inputs[1] not in consts or (len(n.inputs) > 2 and n.inputs[2] not in consts):
            problems.add(n, "the weight and bias must be constants")
    if op == "MaxPool":
        if any(d != 1 for d in a.get("dilations", [1, 1])):
            problems.add(n, "dilated max pooling is not supported")
        if len(n.outputs) > 1:
            problems.add(n, "the Indices output is not supported")
    if op == "AveragePool":
        if a.get("ceil_mode", 0):
            problems.add(n, "ceil_mode=1 is not supported")
        if any(a.get("pads", [0])) and not a.get("count_include_pad", 0):
            problems.add(n, "padding with count_include_pad=0 is not supported (the "
                         "divisor would change at the borders)")
    if op == "BatchNormalization":
        if a.get("training_mode", 0):
            problems.add(n, "training_mode=1 is not supported (export in eval mode)")
        if any(t not in consts for t in n.inputs[1:5]):
            problems.add(n, "the scale, bias, mean and variance must be constants")
    if op == "Gemm":
        if a.get("transA", 0):
            problems.add(n, "transA=1 is not supported")
        if n.inputs[1] not in consts or (len(n.inputs) > 2 and n.inputs[2]
                                         and n.inputs[2] not in consts):
            problems.add(n, "B and C must be constants")
    if op == "Resize":
        _check_resize(n, a, consts, opset, problems)
    if op == "Pad":
        mode = a.get("mode", "constant")
        if mode != "constant":
            problems.add(n, "Pad mode %s is not supported" % mode)
        value = consts.get(n.inputs[2]) if len(n.inputs) > 2 and n.inputs[2] else None
        if value is not None and float(np.asarray(value).ravel()[0]) != 0.0:
            problems.add(n, "only zero padding is supported")
    if op == "Reshape" and a.get("allowzero", 0):
        problems.add(n, "allowzero=1 is not supported")


def _check_resize(n, a, consts, opset, problems):
    mode = a.get("mode", "nearest")
    if mode != "nearest":
        problems.add(n, "Resize mode %s is not supported (only nearest with an integer "
                     "scale)" % mode)
        return
    # y[h] = x[floor(h / k)]: what CVM's upsampling computes.
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if ctm != "asymmetric":
        problems.add(n, "Resize coordinate_transformation_mode %s is not supported (only "
                     "asymmetric, as torch exports nearest upsampling)" % ctm)
    nearest = a.get("nearest_mode", "round_prefer_floor")
    if nearest != "floor":
        problems.add(n, "Resize nearest_mode %s is not supported (only floor)" % nearest)
    scales = consts.get(n.inputs[2]) if len(n.inputs) > 2 and n.inputs[2] else None
    if scales is not None and np.size(scales) and not _integer_scales(np.ravel(scales)):
        problems.add(n, "Resize scales %s are not supported (only (1, 1, k, k) with an "
                     "integer k)" % [float(v) for v in np.ravel(scales)])


def _integer_scales(s):
    s = [float(v) for v in s]
    return len(s) == 4 and s[:2] == [1.0, 1.0] and s[2] == s[3] and s[2] == int(s[2]) and \
        s[2] >= 1


# ---- constant folding --------------------------------------------------------------

# Bounds on what the float evaluator may allocate, so that a hostile model (a huge
# input, an enormous upsampling) is refused instead of exhausting memory. They are
# CVM's own shape limits (docs/FORMAT.md): a model past them could not load anyway.
MAX_DIM = 1 << 24
MAX_ELEMENTS = 1 << 26


def check_shape(what, shape):
    if any(d < 1 or d > MAX_DIM for d in shape) or int(np.prod(shape)) > MAX_ELEMENTS:
        raise ConvertError("%s: shape %s is outside CVM's limits (each dimension 1..2^24, "
                           "at most 2^26 elements for conversion)" % (what, list(shape)))


def _fold_constants(graph):
    """Finds every tensor's shape on the model's own input shape, then replaces the
    nodes whose inputs are all constant (Shape of a tensor of known shape counts as
    constant) by their values."""
    check_shape("input %s" % graph.input_name, graph.input_shape)
    zero = np.zeros(graph.input_shape, np.float32)
    env = graph.run(zero)
    graph.shapes = {k: tuple(np.shape(v)) for k, v in env.items()}
    for k, v in graph.consts.items():
        graph.shapes.setdefault(k, tuple(np.shape(v)))
    kept = []
    for n in graph.nodes:
        if n.op == "Shape":
            graph.consts[n.outputs[0]] = np.array(graph.shapes[n.inputs[0]], np.int64)
            continue
        if all((not t) or t in graph.consts for t in n.inputs) and n.op != "Dropout":
            args = [graph.consts[t] if t else None for t in n.inputs]
            for name, v in zip(n.outputs, evaluate(n, args, graph.opset, graph.batch)):
                graph.consts[name] = np.asarray(v)
            continue
        kept.append(n)
    graph.nodes = kept


def _check_after_folding(graph, problems):
    for n in graph.nodes:
        if n.op in CONSTANT_ONLY:
            problems.add(n, "%s is supported only where it folds into a constant" % n.op)
        if n.op == "Reshape" and n.inputs[1] not in graph.consts:
            problems.add(n, "the target shape does not fold into a constant")
        if n.op == "Resize":
            scales = resize_scales(n, [np.zeros(graph.shapes[n.inputs[0]])] + [
                graph.consts.get(t) if t else None for t in n.inputs[1:]], graph.opset)
            if not _integer_scales(scales):
                problems.add(n, "Resize scales %s are not supported (only (1, 1, k, k) "
                             "with an integer k)" % scales)
        if n.op in ("Sub", "Mul", "Div") and n.inputs[1] not in graph.consts:
            problems.add(n, "%s of two computed tensors is not supported (only by a "
                         "constant)" % n.op)
        if n.op == "Softmax":
            shape = graph.shapes[n.inputs[0]]
            axis = n.attrs.get("axis", -1 if graph.opset >= 13 else 1)
            if len(shape) != 2 or axis % 2 != 1:
                problems.add(n, "Softmax is supported over the last axis of a 2-D tensor "
                             "only (shape %s, axis %d)" % (list(shape), axis))
    for name in graph.outputs:
        if name in graph.consts:
            problems.add_text("output %s is a constant" % name)
