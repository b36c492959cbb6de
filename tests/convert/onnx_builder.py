"""Small ONNX models built node by node for the converter's tests (no torch needed)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, input_shape, opset=13, seed=0):
        self.nodes, self.inits = [], []
        self.input_shape = list(input_shape)
        self.opset = opset
        self.rng = np.random.RandomState(seed)
        self.k = 0

    def _name(self, base):
        self.k += 1
        return "%s_%d" % (base, self.k)

    def const(self, value, base="c"):
        name = self._name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op, inputs, n_out=1, name=None, **attrs):
        name = name or self._name(op)
        outs = ["%s_out%d" % (name, i) for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k=3, stride=1, pad=1, group=1, bias=True, name=None):
        w = self.const((self.rng.randn(cout, cin // group, k, k) * 0.3).astype(np.float32), "w")
        ins = [x, w]
        if bias:
            ins.append(self.const((self.rng.randn(cout) * 0.1).astype(np.float32), "b"))
        return self.node("Conv", ins, name=name, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=group)

    def batchnorm(self, x, channels):
        r = self.rng
        scale, bias = r.rand(channels) + 0.5, r.randn(channels) * 0.1
        mean, var = r.randn(channels) * 0.1, r.rand(channels) + 0.5
        return self.node("BatchNormalization", [x] + [self.const(v.astype(np.float32))
                                                      for v in (scale, bias, mean, var)])

    def model(self, out, batch_dim=None):
        shape = list(self.input_shape)
        if batch_dim is not None:
            shape[0] = batch_dim
        inp = helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)
        # The output's rank comes from ONNX's own shape inference.
        probe = helper.make_graph(
            self.nodes + [helper.make_node("Identity", [out], ["probe"])], "probe", [inp],
            [helper.make_empty_tensor_value_info("probe")], self.inits)
        probe = helper.make_model(probe, opset_imports=[helper.make_opsetid("", self.opset)])
        inferred = onnx.shape_inference.infer_shapes(probe).graph.value_info
        rank = next((len(v.type.tensor_type.shape.dim) for v in inferred if v.name == out), 0)
        dims = ["d%d" % i for i in range(rank)]
        return self._make(inp, helper.make_tensor_value_info(out, TensorProto.FLOAT, dims))

    def _make(self, inp, outp):
        graph = helper.make_graph(self.nodes, "test", [inp], [outp], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8
        return m

    def save(self, out, path, **kw):
        onnx.save(self.model(out, **kw), str(path))
        return str(path)
