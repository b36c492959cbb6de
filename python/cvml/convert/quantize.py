"""Lowering the float graph to a CVM graph with symmetric integer scales.

Every float tensor becomes a quantized tensor (QT): a CVM entry whose integer
values times a scale approximate the float values. Scales are per tensor, except
that an accumulator (a conv2d or dense output, and what per-channel operations make
of it) may carry one scale per channel along axis 1. Operators ask for the form they
need: conv2d and dense take 8-bit operands with one scale; additions take 16-bit
operands at one common scale, as MRT does. Changing a QT's scale is the requantization
chain of MRT: cvm_clip or cvm_right_shift to make room, broadcast_mul by an integer
(per channel when the scale is), then cvm_right_shift to the target precision, which
rounds half up and saturates. Every precision is the one CVM's verifier infers.
"""
import math

import numpy as np

from . import calibrate
from .cvm_graph import CvmGraph, bound, precision_of_values
from .errors import Problems

MULTIPLIER_BITS = 16   # precision of a requantization multiplier, when it fits
ROOM_BITS = 24         # widest tensor that is multiplied without a shift first
ADD_BITS = 16          # residual adds' operands, at one common scale (MRT's choice)


class QT:
    def __init__(self, entry, scale):
        self.entry = entry
        self.scale = np.asarray(scale, dtype=np.float64)

    @property
    def per_channel(self):
        return self.scale.ndim > 0 and self.scale.size > 1

    @property
    def prec(self):
        return self.entry.prec

    @property
    def shape(self):
        return self.entry.shape


class Options:
    def __init__(self, method="mse", per_channel=True, bias_correction=True, bits=None,
                 output_bits=16):
        self.method = method
        self.per_channel = per_channel
        self.bias_correction = bias_correction
        self.bits = dict(bits or {})
        self.output_bits = output_bits


def _names(graph):
    return {n.name for n in graph.nodes} | {t for n in graph.nodes for t in n.outputs}


def _safe(name):
    s = "".join(c if c.isalnum() or c in "_." else "_" for c in name).strip("_.")
    return s or "t"


class Quantizer:
    def __init__(self, graph, stats, options):
        self.g, self.st, self.opt = graph, stats, options
        self.cvm = CvmGraph()
        self.q = {}
        self.thresholds = {}
        self.memo = {}
        self.problems = Problems(graph.opset)
        self.param_names = set()
        self.bits_of = self._bits_overrides()

    # ---- thresholds and bits ---------------------------------------------------
    def _bits_overrides(self):
        by_tensor = {}
        known = _names(self.g)
        for key, b in self.opt.bits.items():
            if key not in known:
                self.problems.add_text("--bits %s=%d: no node or tensor of that name" % (key, b))
                continue
            if not 2 <= b <= 24:
                self.problems.add_text("--bits %s=%d: bits must be within 2..24" % (key, b))
                continue
            outs = [t for n in self.g.nodes if n.name == key for t in n.outputs] or [key]
            for t in outs:
                by_tensor[t] = b
        return by_tensor

    def T(self, name):
        if name not in self.thresholds:
            self.thresholds[name] = calibrate.threshold(self.st, name, self.opt.method)
        return self.thresholds[name]

    def wide_bits(self, name, default):
        return self.bits_of.get(name, default)

    # ---- requantization --------------------------------------------------------
    def requant(self, qt, s_t, b, where):
        """qt at scale s_t within b bits (b <= 24)."""
        ratio = qt.scale / s_t
        if not qt.per_channel and abs(float(ratio) - 1.0) < 1e-12 and qt.prec <= b:
            return qt
        key = (qt.entry.nid, float(s_t), b)
        if key in self.memo:
            return self.memo[key]
        r = np.atleast_1d(ratio).astype(np.float64)
        rmin = float(r[r > 0].min()) if (r > 0).any() else 1.0
        # Past this magnitude the result saturates anyway, so clipping there is exact.
        need = math.ceil(bound(b) / rmin) + 1
        p = min(qt.prec, need.bit_length() + 1, 31)
        x, shift_in = qt.entry, 0
        if p > ROOM_BITS:
            shift_in = p - ROOM_BITS
            x = self.cvm.right_shift(x, shift_in, p - shift_in)
        elif p < qt.prec:
            x = self.cvm.cvm_clip(x, p)
        rr = r * (1 << shift_in)
        m_bits, shift = self._multiplier(rr, x.prec, b, where)
        if shift is None:
            return None
        mult = np.round(rr * (1 << shift)).astype(np.int64)
        mshape = (1,) if mult.size == 1 else (1, mult.size) + (1,) * (len(x.shape) - 2)
        m = self.cvm.param(self.param_name(where + ".requant_scale"), mult.reshape(mshape))
        y = self.cvm.broadcast("broadcast_mul", x, m)
        z = self.cvm.right_shift(y, shift, b)
        out = QT(z, s_t)
        self.memo[key] = out
        return out

    def _multiplier(self, rr, prec, b, where):
        """(multiplier precision, final shift) so that round(rr * 2^shift) fits the
        multiplier and prec + multiplier precision <= 32, b + shift < 32."""
        top = float(rr.max())
        for m_bits in (min(MULTIPLIER_BITS, 32 - prec), 32 - prec):
            if m_bits < 2 or top <= 0:
                continue
            shift = int(math.floor(math.log2(bound(m_bits) / top)))
            while shift > 0 and np.round(top * (1 << shift)) > bound(m_bits):
                shift -= 1
            shift = min(shift, 31 - b)
            if shift >= 1:
                return m_bits, shift
        self.problems.add_text("%s: the rescale by %.3g cannot be kept within 32 bits"
                               % (where, top))
        return None, None

    def to_bits(self, name, b, threshold=None):
        """The tensor as b-bit values with one scale (its own if already so)."""
        qt = self.q[name]
        if not qt.per_channel and qt.prec <= b:
            return qt
        t = self.T(name) if threshold is None else threshold
        return self.requant(qt, t / bound(b), b, name)

    def param_name(self, base):
        name = _safe(base)
        k, cand = 0, name
        while cand in self.param_names or cand == "data":
            k += 1
            cand = "%s_%d" % (name, k)
        self.param_names.add(cand)
        return cand

    # ---- lowering -------------------------------------------------------------------
    def run(self):
        g = self.g
        s_in = self.T(g.input_name) / 127.0
        self.input_scale = s_in
        self.q[g.input_name] = QT(self.cvm.input(g.input_shape, 8), s_in)
        for n in g.nodes:
            lower = getattr(self, "lower_" + n.op, None)
            if lower is None:  # reading and simplifying leave only operators lowered here
                self.problems.add(n, "%s has no integer form" % n.op)
                self.problems.raise_if_any()
            try:
                self.q[n.outputs[0]] = lower(n)
            except (_Unsupported, ValueError) as e:
                self.problems.add(n, str(e))
            self.problems.raise_if_any()
        for name in g.outputs:
            self.cvm.heads.append(self.output_form(name).entry)
        self.problems.raise_if_any()
        return self.cvm

    def output_form(self, name):
        qt = self.q[name]
        b = self.wide_bits(name, self.opt.output_bits)
        if not qt.per_channel and qt.prec <= max(b, 8):
            return qt
        out = self.to_bits(name, b, threshold=self.st.absmax.get(name) or self.T(name))
        self.q[name] = out
        return out

    def const(self, name):
        return self.g.consts[name]

    def shape(self, name):
        return self.g.shapes[name]

    # -- convolution and dense -----------------------------------------------------
    def _weights(self, w):
        """Symmetric int8 weights with a scale per output channel (or one scale)."""
        w = w.astype(np.float64)
        flat = np.abs(w.reshape(w.shape[0], -1))
        top = flat.max(axis=1) if self.opt.per_channel else np.full(w.shape[0], flat.max())
        scale = np.where(top > 0, top / 127.0, 1.0)
        qw = np.clip(np.round(w / scale.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127)
        return qw.astype(np.int64), scale

    def _bias(self, b, qw, wscale, x_scale, mean_in, groups=1):
        """The integer bias at the accumulator's scale, with bias correction: the
        expected output error of the rounded weights on the calibration data's mean
        input is taken out of the bias."""
        b = np.zeros(qw.shape[0]) if b is None else b.astype(np.float64)
        if self.opt.bias_correction and mean_in is not None:
            err = qw * wscale.reshape((-1,) + (1,) * (qw.ndim - 1)) - self._float_w
            o, cg = qw.shape[0], (qw.shape[1] if qw.ndim > 1 else 1)
            m = np.asarray(mean_in, dtype=np.float64)
            if qw.ndim == 4:
                per_group = m.reshape(groups, cg)
                mg = np.repeat(per_group, o // groups, axis=0)  # (O, cg)
                b = b - (err.sum(axis=(2, 3)) * mg).sum(axis=1)
            else:
                b = b - err @ m
        acc_scale = x_scale * wscale
        qb = np.round(b / acc_scale)
        if np.abs(qb).max(initial=0) > bound(31):
            raise _Unsupported("the bias does not fit 31 bits at the accumulator's scale")
        return qb.astype(np.int64), acc_scale

    def lower_Conv(self, n):
        x = self.to_bits(n.inputs[0], 8)
        w = self.const(n.inputs[1])
        b = self.const(n.inputs[2]) if len(n.inputs) > 2 and n.inputs[2] else None
        groups = n.attrs.get("group", 1)
        pads = n.attrs.get("pads", [0, 0, 0, 0])
        strides = n.attrs.get("strides", [1, 1])
        dil = n.attrs.get("dilations", [1, 1])
        self._float_w = w.astype(np.float64)
        qw, wscale = self._weights(w)
        qb, acc_scale = self._bias(b, qw, wscale, float(x.scale), self._mean(n.inputs[0]),
                                   groups)
        base = n.name
        wp = self.cvm.param(self.param_name(base + ".weight"), qw)
        bp = self.cvm.param(self.param_name(base + ".bias"), qb)
        e = self.cvm.conv2d(x.entry, wp, bp, strides, (pads[0], pads[1]), dil, groups)
        return QT(e, acc_scale)

    def lower_Gemm(self, n):
        if len(self.shape(n.inputs[0])) != 2:
            raise _Unsupported("input A must be 2-D (flatten it first), not %s"
                               % list(self.shape(n.inputs[0])))
        x = self.to_bits(n.inputs[0], 8)
        w = self.const(n.inputs[1]).astype(np.float64)
        if not n.attrs.get("transB", 0):
            w = w.T
        w = w * n.attrs.get("alpha", 1.0)
        b = None
        if len(n.inputs) > 2 and n.inputs[2]:
            c = np.broadcast_to(self.const(n.inputs[2]), (x.shape[0], w.shape[0]))
            if np.any(c != c[:1]):
                raise _Unsupported("C must be the same for every row")
            b = c[0] * n.attrs.get("beta", 1.0)
        self._float_w = w
        qw, wscale = self._weights(w)
        qb, acc_scale = self._bias(b, qw, wscale, float(x.scale), self._mean(n.inputs[0]))
        wp = self.cvm.param(self.param_name(n.name + ".weight"), qw)
        bp = self.cvm.param(self.param_name(n.name + ".bias"), qb)
        return QT(self.cvm.dense(x.entry, wp, bp), acc_scale)

    def _mean(self, name):
        m = calibrate.channel_mean(self.st, name)
        return None if m is None else np.asarray(m)

    # -- activations ------------------------------------------------------------------
    def lower_Relu(self, n):
        x = self.q[n.inputs[0]]
        return QT(self.cvm.unary("relu", x.entry), x.scale)

    def lower_Clip(self, n):
        lo, hi = _clip_bounds(n, self.g)
        if lo is None or lo != 0 or hi is None or hi <= 0:
            raise _Unsupported("only Clip(0, max) (ReLU6 and the like) is supported, "
                               "got min %s max %s" % (lo, hi))
        # Saturating at the output's threshold is the upper bound; relu the lower.
        t = min(hi, self.T(n.outputs[0]))
        x = self.q[n.inputs[0]]
        if not x.per_channel and x.prec <= 8 and float(x.scale) * 127 <= t:
            y = x
        else:
            y = self.requant(x, t / 127.0, 8, n.name)
        return QT(self.cvm.unary("relu", y.entry), y.scale)

    def lower_Sigmoid(self, n):
        x = self.to_bits(n.inputs[0], 8)
        s = float(x.scale)
        one = self.cvm.param(self.param_name(n.name + ".offset"), np.array([127]))
        idx = self.cvm.broadcast("broadcast_add", x.entry, one)
        grid = (np.arange(255) - 127) * s
        table = np.round(127.0 / (1.0 + np.exp(-grid))).astype(np.int64)
        tp = self.cvm.param(self.param_name(n.name + ".table"), table)
        return QT(self.cvm.lut(idx, tp), 1.0 / 127.0)

    def lower_Softmax(self, n):
        """Probabilities times 2^(b-1) - 1: exp(x - max) from a table over the 8-bit
        gap (15-bit entries), summed, and divided (truncating) into the scaled
        numerators. b is the output's bits when the softmax is a model output (ties
        between close classes are rarer), else 8."""
        x = self.to_bits(n.inputs[0], 8)
        s = float(x.scale)
        shape = x.shape
        is_output = n.outputs[0] in self.g.outputs
        b = self.wide_bits(n.outputs[0], self.opt.output_bits if is_output else 8)
        b = min(b, 16)
        top = self.cvm.reduce("max", x.entry, (1,), True, (shape[0], 1))
        gap = self.cvm.broadcast("broadcast_sub", top, x.entry, kind="compute")
        table = np.round(np.exp(-np.arange(255) * s) * bound(15)).astype(np.int64)
        tp = self.cvm.param(self.param_name(n.name + ".exp_table"), table)
        e = self.cvm.lut(gap, tp)
        total = self.cvm.reduce("sum", e, (1,), True, (shape[0], 1))
        k = self.cvm.param(self.param_name(n.name + ".out_scale"), np.array([bound(b)]))
        num = self.cvm.broadcast("broadcast_mul", e, k, kind="compute")
        p = self.cvm.broadcast("broadcast_div", num, total, kind="compute")
        return QT(self.cvm.cvm_clip(p, b, kind="compute"), 1.0 / bound(b))

    # -- arithmetic -------------------------------------------------------------------
    def lower_Add(self, n):
        a_name, b_name = n.inputs
        if b_name in self.g.consts or a_name in self.g.consts:
            t, c = (a_name, b_name) if b_name in self.g.consts else (b_name, a_name)
            return self._add_const(n, self.q[t], self.const(c))
        b = self.wide_bits(n.outputs[0], ADD_BITS)
        top = max(self.st.absmax.get(a_name, 0.0), self.st.absmax.get(b_name, 0.0)) or 1.0
        s = top / bound(b)
        qa = self.requant(self.q[a_name], s, b, n.name + ".lhs")
        qb = self.requant(self.q[b_name], s, b, n.name + ".rhs")
        return QT(self.cvm.elemwise_add(qa.entry, qb.entry), s)

    def lower_Sub(self, n):
        return self._add_const(n, self.q[n.inputs[0]], -self.const(n.inputs[1]))

    def _add_const(self, n, x, c):
        c = np.asarray(c, dtype=np.float64)
        full = np.broadcast_shapes(c.shape, x.shape)
        if tuple(full) != tuple(x.shape):
            raise _Unsupported("the constant would broadcast the tensor to %s" % list(full))
        scale = x.scale.reshape((1, -1) + (1,) * (len(x.shape) - 2)) if x.per_channel \
            else x.scale
        cq = np.round(c / scale)
        cq = cq.reshape(np.broadcast_shapes(cq.shape, (1,)))
        if np.abs(cq).max(initial=0) > bound(24):
            x = self.requant(x, float(np.max(x.scale)), 16, n.name)
            return self._add_const(n, x, c)
        cp = self.cvm.param(self.param_name(n.name + ".constant"), cq.astype(np.int64))
        return QT(self.cvm.broadcast("broadcast_add", x.entry, cp, kind="compute"), x.scale)

    def lower_Mul(self, n):
        return self._scale_by(n, self.q[n.inputs[0]], self.const(n.inputs[1]))

    def lower_Div(self, n):
        c = np.asarray(self.const(n.inputs[1]), dtype=np.float64)
        if np.any(c == 0):
            raise _Unsupported("division by a constant that holds 0")
        return self._scale_by(n, self.q[n.inputs[0]], 1.0 / c)

    def _scale_by(self, n, x, c):
        """Multiplying by a constant that is one value, or one value a channel, only
        changes the scale (and the sign, by a multiply with ±1)."""
        c = np.asarray(c, dtype=np.float64)
        flat = c.reshape(-1)
        if c.size != 1 and not _per_channel_shape(c.shape, x.shape):
            raise _Unsupported("a constant of shape %s: only one value, or one value per "
                               "channel, is supported" % list(c.shape))
        mag = np.where(flat == 0, 1.0, np.abs(flat))
        scale = x.scale * (mag if flat.size > 1 else mag[0])
        entry = x.entry
        if np.any(flat <= 0):
            sign = np.sign(flat).astype(np.int64)
            shape = (1,) if sign.size == 1 else (1, sign.size) + (1,) * (len(x.shape) - 2)
            sp = self.cvm.param(self.param_name(n.name + ".sign"), sign.reshape(shape))
            entry = self.cvm.broadcast("broadcast_mul", entry, sp, kind="compute")
        return QT(entry, scale)

    def lower_BatchNormalization(self, n):
        scale, bias, mean, var = (self.const(t).astype(np.float64) for t in n.inputs[1:5])
        a = scale / np.sqrt(var + n.attrs.get("epsilon", 1e-5))
        x = self.q[n.inputs[0]]
        shape = (1, -1) + (1,) * (len(x.shape) - 2)
        y = self._scale_by(n, x, a.reshape(shape))
        return self._add_const(n, y, (bias - mean * a).reshape(shape))

    # -- pooling ------------------------------------------------------------------------
    def lower_MaxPool(self, n):
        x = self.q[n.inputs[0]]
        pads = n.attrs.get("pads", [0, 0, 0, 0])
        e = self.cvm.max_pool2d(x.entry, n.attrs["kernel_shape"], n.attrs.get("strides", [1, 1]),
                                (pads[0], pads[1]), n.attrs.get("ceil_mode", 0),
                                self.shape(n.outputs[0]))
        return QT(e, x.scale)

    def lower_AveragePool(self, n):
        # A depthwise conv2d with weights of 1 sums each window; the divisor goes
        # into the scale.
        x = self.to_bits(n.inputs[0], 8)
        kh, kw = n.attrs["kernel_shape"]
        c = x.shape[1]
        pads = n.attrs.get("pads", [0, 0, 0, 0])
        ones = self.cvm.param(self.param_name(n.name + ".window"),
                              np.ones((c, 1, kh, kw), np.int64))
        e = self.cvm.conv2d(x.entry, ones, None, n.attrs.get("strides", [1, 1]),
                            (pads[0], pads[1]), (1, 1), c)
        return QT(e, x.scale / (kh * kw))

    def lower_GlobalAveragePool(self, n):
        x = self.q[n.inputs[0]]
        h, w = x.shape[2], x.shape[3]
        if x.prec + (h * w).bit_length() > 32:
            x = self.to_bits(n.inputs[0], 16)
        n_, c = x.shape[:2]
        e = self.cvm.reduce("sum", x.entry, (2, 3), True, (n_, c, 1, 1))
        return QT(e, x.scale / (h * w))

    # -- shapes -------------------------------------------------------------------------
    def _one_scale(self, name):
        qt = self.q[name]
        if qt.per_channel:
            return self.to_bits(name, self.wide_bits(name, 8))
        return qt

    def lower_Flatten(self, n):
        x = self._one_scale(n.inputs[0])
        out = self.shape(n.outputs[0])
        if n.attrs.get("axis", 1) == 1:
            return QT(self.cvm.flatten(x.entry), x.scale)
        return QT(self.cvm.reshape(x.entry, out), x.scale)

    def _reshaped(self, n):
        x = self._one_scale(n.inputs[0])
        return QT(self.cvm.reshape(x.entry, self.shape(n.outputs[0])), x.scale)

    lower_Reshape = _reshaped
    lower_Squeeze = _reshaped
    lower_Unsqueeze = _reshaped

    def lower_Transpose(self, n):
        x = self._one_scale(n.inputs[0])
        perm = n.attrs.get("perm") or list(reversed(range(len(x.shape))))
        return QT(self.cvm.transpose(x.entry, perm), x.scale)

    def lower_Concat(self, n):
        b = self.wide_bits(n.outputs[0], 8)
        s = self.T(n.outputs[0]) / bound(b)
        parts = [self.requant(self.q[t], s, b, "%s.input%d" % (n.name, i))
                 for i, t in enumerate(n.inputs)]
        axis = n.attrs["axis"] % len(parts[0].shape)
        return QT(self.cvm.concatenate([p.entry for p in parts], axis,
                                       self.shape(n.outputs[0])), s)

    def lower_Resize(self, n):
        x = self.q[n.inputs[0]]
        k = self.shape(n.outputs[0])[2] // x.shape[2]
        return QT(self.cvm.upsampling(x.entry, k), x.scale)


def _per_channel_shape(cshape, xshape):
    """Whether a constant broadcast against x holds one value per channel (axis 1)."""
    if len(cshape) > len(xshape) or len(xshape) < 2:
        return False
    full = (1,) * (len(xshape) - len(cshape)) + tuple(cshape)
    return full[1] == xshape[1] and all(d == 1 for i, d in enumerate(full) if i != 1)


class _Unsupported(Exception):
    """A node the quantizer cannot express; the message is the reason."""


def _clip_bounds(n, graph):
    """Clip's bounds: inputs 1 and 2 at every opset the converter reads (11 and up)."""
    lo = graph.consts.get(n.inputs[1]) if len(n.inputs) > 1 and n.inputs[1] else None
    hi = graph.consts.get(n.inputs[2]) if len(n.inputs) > 2 and n.inputs[2] else None
    return (None if lo is None else float(np.asarray(lo).ravel()[0]),
            None if hi is None else float(np.asarray(hi).ravel()[0]))
