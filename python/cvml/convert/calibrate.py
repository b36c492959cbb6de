"""Calibration: running the float model over the calibration images and choosing
each tensor's threshold (the float magnitude its integer range stands for).

Statistics are gathered in two passes over the data in batches: the first finds
each tensor's absolute maximum and per-channel means (for bias correction), the
second fills a histogram of |x| over [0, absmax] per tensor. The threshold methods
work on those histograms.
"""
import numpy as np

BINS = 2048
METHODS = ("mse", "percentile", "entropy", "absmax", "mrt")
PERCENTILE = 99.99


class Stats:
    def __init__(self):
        self.absmax = {}
        self.channel_sum = {}
        self.count = {}
        self.hist = {}
        self.zeros = {}


def _batches(data, size):
    for i in range(0, len(data), size):
        yield data[i:i + size]


# Elements of the largest tensor in one batch: calibration's memory, whatever the
# model (about 64 MB of float32).
BATCH_ELEMENTS = 1 << 24


def gather(graph, data, batch=100):
    """Runs the float model over data (N, *input shape without the batch)."""
    st = Stats()
    largest = max(int(np.prod(s)) for s in graph.shapes.values()) // max(graph.batch, 1)
    batch = max(1, min(batch, BATCH_ELEMENTS // max(largest, 1)))

    def first(name, v):
        m = float(np.abs(v).max()) if v.size else 0.0
        st.absmax[name] = max(st.absmax.get(name, 0.0), m)
        if v.ndim >= 2:
            axes = tuple(i for i in range(v.ndim) if i != 1)
            st.channel_sum[name] = st.channel_sum.get(name, 0.0) + v.sum(axis=axes,
                                                                          dtype=np.float64)
            st.count[name] = st.count.get(name, 0) + v.size // v.shape[1]

    def second(name, v):
        top = st.absmax[name]
        if top <= 0:
            return
        h, _ = np.histogram(np.abs(v), bins=BINS, range=(0.0, top))
        st.hist[name] = st.hist.get(name, 0) + h
        st.zeros[name] = st.zeros.get(name, 0) + int(np.count_nonzero(v == 0))

    for keep in (first, second):
        for chunk in _batches(data, batch):
            x = np.asarray(chunk, np.float32)
            keep(graph.input_name, x)
            graph.run(x, keep=keep)
    return st


def channel_mean(st, name):
    if name not in st.channel_sum:
        return None
    return st.channel_sum[name] / max(st.count[name], 1)


def threshold(st, name, method, levels=127):
    """The threshold of one tensor by a method; levels is the positive integer range
    (127 for int8)."""
    top = st.absmax.get(name, 0.0)
    hist = st.hist.get(name)
    if top <= 0 or hist is None or method in ("absmax", "mrt"):
        return top if top > 0 else 1.0
    edges = np.linspace(0.0, top, BINS + 1)
    if method == "percentile":
        return _percentile(hist, edges, PERCENTILE)
    if method == "mse":
        return _mse(hist, edges, levels)
    if method == "entropy":
        # Exact zeros (half of a ReLU's output) are exact at every threshold; left in,
        # their spike dominates the divergence and drags the threshold down.
        hist = hist.copy()
        hist[0] -= st.zeros.get(name, 0)
        return _entropy(hist, edges, levels)
    raise ValueError("unknown calibration method %s" % method)


def _percentile(hist, edges, pct):
    c = np.cumsum(hist)
    i = int(np.searchsorted(c, c[-1] * pct / 100.0))
    return float(edges[min(i + 1, len(edges) - 1)])


def _mse(hist, edges, levels):
    """The threshold that minimises the squared error of symmetric rounding and
    clipping over the histogram (bin centres stand for their values)."""
    centers = (edges[:-1] + edges[1:]) / 2
    weight = hist.astype(np.float64)
    best, best_t = None, edges[-1]
    for k in range(BINS // 16, BINS + 1, 8):
        t = edges[k]
        step = t / levels
        q = np.minimum(np.round(centers / step), levels) * step
        err = float((weight * (centers - q) ** 2).sum())
        if best is None or err < best:
            best, best_t = err, t
    return float(best_t)


def _entropy(hist, edges, levels):
    """TensorRT-style KL calibration: the threshold whose quantized distribution (levels
    bins, clipped mass folded into the last) diverges least from the reference."""
    hist = hist.astype(np.float64)
    best, best_i = None, BINS
    for i in range(levels + 1, BINS + 1, 8):
        ref = hist[:i].copy()
        ref[-1] += hist[i:].sum()
        if ref.sum() == 0:
            continue
        chunks = np.array_split(np.arange(i), levels)
        q = np.zeros(i)
        for idx in chunks:
            nz = hist[idx] > 0
            if nz.any():
                q[idx[nz]] = hist[idx].sum() / nz.sum()
        p = ref / ref.sum()
        qs = q.sum()
        if qs == 0:
            continue
        q = q / qs
        mask = p > 0
        kl = float(np.sum(p[mask] * np.log(p[mask] / np.maximum(q[mask], 1e-12))))
        if best is None or kl < best:
            best, best_i = kl, i
    return float(edges[best_i])
