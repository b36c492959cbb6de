"""The float semantics of the ONNX operators the converter reads, in numpy.

The converter runs the float model with these for shape inference, constant
folding and calibration, so they follow the ONNX operator definitions for the
attribute forms that onnx_model.py accepts (checked there, not here). Activations
are float32; a leading batch dimension may differ from the model's fixed batch
(calibration runs many images at once).
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _pairs(node, name, default):
    v = node.attrs.get(name)
    return tuple(v) if v is not None else default


def conv_windows(x, kernel, strides, dilations, pads):
    """(N, C, OH, OW, KH, KW) views of the zero-padded input under each output cell."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    ph0, pw0, ph1, pw1 = pads
    xp = np.pad(x, ((0, 0), (0, 0), (ph0, ph1), (pw0, pw1)))
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    win = sliding_window_view(xp, (span_h, span_w), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw]


def conv2d(x, w, b, strides, dilations, pads, group):
    o, cg, kh, kw = w.shape
    win = conv_windows(x, (kh, kw), strides, dilations, pads)
    n, c, oh, ow = win.shape[:4]
    if group == 1:
        y = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))  # (N, OH, OW, O)
        y = y.transpose(0, 3, 1, 2)
    elif cg == 1 and o == c:
        y = np.einsum("nchwij,cij->nchw", win, w[:, 0], optimize=True)
    else:
        wg = win.reshape(n, group, cg, oh, ow, kh, kw)
        wt = w.reshape(group, o // group, cg, kh, kw)
        y = np.einsum("ngchwij,gocij->ngohw", wg, wt, optimize=True).reshape(n, o, oh, ow)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return np.ascontiguousarray(y, dtype=np.float32)


def conv_attrs(node, w_shape):
    kernel = _pairs(node, "kernel_shape", tuple(w_shape[2:]))
    strides = _pairs(node, "strides", (1, 1))
    dilations = _pairs(node, "dilations", (1, 1))
    pads = _pairs(node, "pads", (0, 0, 0, 0))
    return kernel, strides, dilations, pads


def op_conv(node, x, w, b=None):
    _, strides, dilations, pads = conv_attrs(node, w.shape)
    return conv2d(x, w, b, strides, dilations, pads, node.attrs.get("group", 1))


def _pool_windows(node, x, pad_value):
    kernel = tuple(node.attrs["kernel_shape"])
    strides = _pairs(node, "strides", (1, 1))
    ph0, pw0, ph1, pw1 = _pairs(node, "pads", (0, 0, 0, 0))
    if node.attrs.get("ceil_mode", 0):
        # Extra cells on the bottom/right so the last, partial window exists.
        h, w = x.shape[2] + ph0 + ph1, x.shape[3] + pw0 + pw1
        ph1 += (-(h - kernel[0])) % strides[0]
        pw1 += (-(w - kernel[1])) % strides[1]
    xp = np.pad(x, ((0, 0), (0, 0), (ph0, ph1), (pw0, pw1)), constant_values=pad_value)
    win = sliding_window_view(xp, kernel, axis=(2, 3))
    return win[:, :, ::strides[0], ::strides[1]]


def op_maxpool(node, x):
    return _pool_windows(node, x, -np.inf).max(axis=(4, 5)).astype(np.float32)


def op_averagepool(node, x):
    # Only count_include_pad=1 or no padding are accepted, so the divisor is constant.
    k = node.attrs["kernel_shape"]
    return (_pool_windows(node, x, 0.0).sum(axis=(4, 5)) / (k[0] * k[1])).astype(np.float32)


def op_global_average_pool(node, x):
    return x.mean(axis=(2, 3), keepdims=True).astype(np.float32)


def op_batchnorm(node, x, scale, bias, mean, var):
    eps = node.attrs.get("epsilon", 1e-5)
    a = scale / np.sqrt(var + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x * a.reshape(shape) + (bias - mean * a).reshape(shape)).astype(np.float32)


def op_gemm(node, a, b, c=None):
    if node.attrs.get("transA", 0):
        a = a.T
    if node.attrs.get("transB", 0):
        b = b.T
    y = node.attrs.get("alpha", 1.0) * (a @ b)
    if c is not None:
        y = y + node.attrs.get("beta", 1.0) * c
    return y.astype(np.float32)


def op_clip(node, x, lo=None, hi=None):
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return x.astype(x.dtype)


def op_softmax(node, x, opset):
    axis = node.attrs.get("axis", -1 if opset >= 13 else 1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def op_resize(node, x, scales):
    sh, sw = int(scales[2]), int(scales[3])
    return x.repeat(sh, axis=2).repeat(sw, axis=3)


def batch_reshape(x, shape, model_batch):
    """Reshape whose leading model-batch entry follows the actual batch."""
    shape = [int(d) for d in shape]
    if shape and shape[0] == model_batch and x.shape[0] != model_batch:
        shape[0] = x.shape[0]
    # ONNX: 0 copies the input's dimension (allowzero is rejected on reading).
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def op_flatten(node, x):
    axis = node.attrs.get("axis", 1)
    lead = int(np.prod(x.shape[:axis])) if axis else 1
    return x.reshape(lead, -1)


def axes_of(node, axes_input, opset):
    if opset >= 13 and axes_input is not None:
        return [int(a) for a in axes_input]
    return list(node.attrs.get("axes", []))


def op_squeeze(node, x, axes):
    if not axes:
        return x.reshape([d for d in x.shape if d != 1])
    return np.squeeze(x, axis=tuple(a % x.ndim for a in axes))


def op_unsqueeze(node, x, axes):
    ndim = x.ndim + len(axes)
    for a in sorted(a % ndim for a in axes):
        x = np.expand_dims(x, a)
    return x


def op_gather(node, x, idx):
    return np.take(x, idx.astype(np.int64), axis=node.attrs.get("axis", 0))
