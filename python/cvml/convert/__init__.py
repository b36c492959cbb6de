"""cvml-convert: float ONNX models to integer CVM models, with post-training
quantization from calibration data.

    from cvml.convert import convert
    result = convert("model.onnx", calibration_array, "out/model")
    # writes out/model.json, out/model.params and out/model.quant.json

The converter needs only numpy and onnx (Debian python3-numpy, python3-onnx); it
runs the float model with its own numpy evaluator. docs/convert.md explains the
scheme, the methods and what is not supported.
"""
import json
import os

import numpy as np

from . import calibrate, onnx_model, simplify
from .errors import ConvertError
from .quantize import Options, Quantizer

__all__ = ["convert", "Result", "ConvertError", "Options", "quantize_input", "METHODS"]

METHODS = calibrate.METHODS
DEFAULT_METHOD = "mse"
DEFAULT_IMAGES = 1000
MRT_IMAGES = 16


class Result:
    """What a conversion made: the CVM graph, the float graph, the scales."""

    def __init__(self, cvm, graph, quantizer, options, images):
        self.cvm, self.graph, self.quantizer = cvm, graph, quantizer
        self.options, self.images = options, images
        self.graph_json = cvm.graph_json()
        self.params = cvm.params_blob()
        self.input_scale = quantizer.input_scale

    def quant_record(self):
        """The sidecar: how a float input becomes the int8 input, the output scales,
        every tensor's threshold and the settings."""
        q = self.quantizer
        outs = []
        for name, head in zip(self.graph.outputs, self.cvm.heads):
            qt = q.q[name]
            outs.append({"name": name, "scale": float(qt.scale), "precision": head.prec,
                         "shape": list(head.shape)})
        thresholds = {k: float(v) for k, v in sorted(q.thresholds.items())}
        absmax = {k: float(v) for k, v in sorted(self.quantizer.st.absmax.items())}
        o = self.options
        return {
            "format": "cvml-quant 1",
            "input": {"name": self.graph.input_name, "shape": list(self.graph.input_shape),
                      "scale": self.input_scale, "precision": 8,
                      "to_int8": "q = clip(round(x / scale), -127, 127)"},
            "outputs": outs,
            "method": o.method, "per_channel": o.per_channel,
            "bias_correction": o.bias_correction, "calibration_images": self.images,
            "bits": dict(sorted(o.bits.items())),
            "thresholds": thresholds,
            "absmax": absmax,
        }


def quantize_input(x, scale):
    """Float inputs to the model's int8 input, as the sidecar records it."""
    return np.clip(np.round(np.asarray(x, np.float64) / scale), -127, 127).astype(np.int8)


def _calibration_images(graph, data, method, limit):
    data = np.asarray(data)
    per = tuple(graph.input_shape[1:])
    if data.ndim == len(graph.input_shape) - 1 and tuple(data.shape) == per:
        data = data[None]
    if data.ndim != len(graph.input_shape) or tuple(data.shape[1:]) != per:
        raise ConvertError("calibration data of shape %s does not match the model's input "
                           "%s: expected (N, %s)" % (list(data.shape), list(graph.input_shape),
                                                     ", ".join(map(str, per))))
    if len(data) == 0:
        raise ConvertError("calibration data holds no images")
    if not np.issubdtype(data.dtype, np.number) or not np.all(np.isfinite(data)):
        raise ConvertError("calibration data must be finite numbers")
    if limit < 1:
        raise ConvertError("at least one calibration image is needed (images=%d)" % limit)
    n = MRT_IMAGES if method == "mrt" else limit
    return data[:n].astype(np.float32)


def convert(onnx_path, calibration, method=DEFAULT_METHOD, per_channel=None,
            bias_correction=None, bits=None, images=DEFAULT_IMAGES, output_bits=16):
    """Converts; returns a Result (nothing is written) or raises ConvertError."""
    if method not in METHODS:
        raise ConvertError("unknown method %s (one of %s)" % (method, ", ".join(METHODS)))
    mrt = method == "mrt"
    options = Options(method=method,
                      per_channel=(not mrt) if per_channel is None else per_channel,
                      bias_correction=(not mrt) if bias_correction is None else bias_correction,
                      bits=bits, output_bits=output_bits)
    graph = onnx_model.load(onnx_path)
    simplify.simplify(graph)
    data = _calibration_images(graph, calibration, method, images)
    stats = calibrate.gather(graph, data)
    quantizer = Quantizer(graph, stats, options)
    cvm = quantizer.run()
    return Result(cvm, graph, quantizer, options, len(data))


def write(result, prefix):
    """Writes PREFIX.json, PREFIX.params and PREFIX.quant.json, all or none."""
    files = {prefix + ".json": result.graph_json.encode(),
             prefix + ".params": result.params,
             prefix + ".quant.json": (json.dumps(result.quant_record(), indent=1) +
                                      "\n").encode()}
    tmp = []
    try:
        for path, data in files.items():
            t = path + ".tmp%d" % os.getpid()
            with open(t, "wb") as f:
                f.write(data)
            tmp.append((t, path))
        for t, path in tmp:
            os.replace(t, path)
    except OSError as e:
        for t, path in tmp:
            for p in (t, path):
                if os.path.exists(p):
                    os.remove(p)
        raise ConvertError("cannot write %s: %s" % (prefix, e))
    return list(files)
