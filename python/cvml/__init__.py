"""Python binding of cvm-lite over its C API (ctypes; numpy arrays in and out).

    import cvml
    with cvml.Model.from_files("model.json", "model.params") as m:
        print(m.gas, m.inputs, m.outputs)
        (logits,) = m.run(image)            # numpy in, numpy out (one array per output)
        raw = m.run_bytes(image_bytes)      # upstream's CVMAPIInference bytes

`cmake --install` puts this package in PREFIX/lib/python/cvml; with
PYTHONPATH=PREFIX/lib/python it finds the installed libcvml.so relative to itself.
The library is searched as $CVML_LIBRARY, then the installed one (_install.py,
written by `cmake --install`), then beside this package and in ../../lib, then on
the loader's search path.

run() takes one integer array per input with the input's shape (leading dimensions
of 1 may be left out or added), and values
that fit the input's element type (int8 or int32, as the `cvml` tool requires);
it returns one array per output in that output's type (TensorInfo.dtype).
Failures raise LogicError (the model or the input is invalid) or RuntimeError (the
runtime or the system failed); both derive from CvmlError and carry the C status in
.status. See python/README.md.
"""
import builtins
import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["CvmlError", "LogicError", "RuntimeError", "Model", "TensorInfo", "version",
           "load_library"]

OK, ERR_LOGIC, ERR_RUNTIME = 0, 1, 2
MAX_DIMS = 6


class CvmlError(Exception):
    """A failed cvm-lite call; .status is the C API's status code."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class LogicError(CvmlError):
    """The model or the caller's input is invalid (status 1, upstream ERROR_LOGIC)."""


class RuntimeError(CvmlError, builtins.RuntimeError):  # noqa: A001 - the C API's class name
    """The runtime or the system failed (status 2, upstream ERROR_RUNTIME)."""


def _raise(status, what, lib):
    msg = lib.cvml_last_error().decode("utf-8", "replace")
    text = "%s: %s" % (what, msg) if msg else what
    if status == ERR_LOGIC:
        raise LogicError(status, text)
    raise RuntimeError(status, text)


class _Lib:
    """The loaded shared library with typed function prototypes."""

    def __init__(self, path):
        self.path = path
        self.dll = ctypes.CDLL(path)
        P = ctypes.c_void_p
        I = ctypes.c_int
        S = ctypes.c_size_t
        U64 = ctypes.c_uint64
        CP = ctypes.c_char_p
        protos = {
            "cvml_init": (I, []),
            "cvml_release": (I, []),
            "cvml_version": (CP, []),
            "cvml_last_error": (CP, []),
            "cvml_context_create": (I, [ctypes.POINTER(P)]),
            "cvml_context_release": (I, [P]),
            "cvml_context_set_threads": (I, [P, I]),
            "cvml_context_set_devices": (I, [P, ctypes.POINTER(CP), I]),
            "cvml_graph_load_file": (I, [P, CP, CP, CP, ctypes.POINTER(P)]),
            "cvml_graph_load_memory": (I, [P, CP, P, S, P, S, ctypes.POINTER(P)]),
            "cvml_graph_release": (I, [P]),
            "cvml_graph_prerun": (I, [P]),
            "cvml_graph_run": (I, [P]),
            "cvml_graph_gas": (I, [P, ctypes.POINTER(U64)]),
            "cvml_graph_gas_split": (I, [P, ctypes.POINTER(U64), ctypes.POINTER(U64)]),
            "cvml_graph_version": (I, [P, ctypes.POINTER(CP)]),
            "cvml_graph_postprocess": (I, [P, ctypes.POINTER(CP)]),
            "cvml_graph_input_count": (I, [P, ctypes.POINTER(I)]),
            "cvml_graph_output_count": (I, [P, ctypes.POINTER(I)]),
            "cvml_graph_get_input": (I, [P, I, ctypes.POINTER(P)]),
            "cvml_graph_get_output": (I, [P, I, ctypes.POINTER(P)]),
            "cvml_graph_input_bytes": (I, [P, ctypes.POINTER(S), ctypes.POINTER(I)]),
            "cvml_graph_output_bytes": (I, [P, ctypes.POINTER(S), ctypes.POINTER(I)]),
            "cvml_graph_run_bytes": (I, [P, P, S, P, S]),
            "cvml_tensor_name": (I, [P, ctypes.POINTER(CP)]),
            "cvml_tensor_shape": (I, [P, ctypes.POINTER(I), ctypes.POINTER(ctypes.c_int32)]),
            "cvml_tensor_precision": (I, [P, ctypes.POINTER(I)]),
            "cvml_tensor_dtype": (I, [P, ctypes.POINTER(I)]),
            "cvml_tensor_element_count": (I, [P, ctypes.POINTER(S)]),
            "cvml_tensor_set_i32": (I, [P, P, S]),
            "cvml_tensor_get_i32": (I, [P, P, S]),
        }
        for name, (res, args) in protos.items():
            try:
                fn = getattr(self.dll, name)
            except AttributeError:
                fn = _missing(path, name)
            else:
                fn.restype = res
                fn.argtypes = args
            setattr(self, name, fn)

    def check(self, status, what):
        if status != OK:
            _raise(status, what, self)


def _missing(path, name):
    """A library older than this binding: the call fails as a runtime error."""

    def call(*_args):
        raise RuntimeError(ERR_RUNTIME, "%s does not export %s" % (path, name))

    return call


_lib = None


def _installed_library():
    """The libcvml.so installed with this package, from the path `cmake --install`
    recorded relative to the package directory; None in a source tree."""
    try:
        from . import _install
    except ImportError:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, _install.LIBRARY))


def _candidates():
    env = os.environ.get("CVML_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    installed = _installed_library()
    if installed and os.path.exists(installed):
        yield installed
    for rel in ("libcvml.so", os.path.join("..", "..", "lib", "libcvml.so")):
        p = os.path.normpath(os.path.join(here, rel))
        if os.path.exists(p):
            yield p
    found = ctypes.util.find_library("cvml")
    if found:
        yield found


def load_library(path=None):
    """Loads (once) and returns the shared library; `path` overrides the search."""
    global _lib
    if path is not None:
        _lib = _Lib(path)
    elif _lib is None:
        errors = []
        for cand in _candidates():
            try:
                _lib = _Lib(cand)
                break
            except OSError as e:
                errors.append(str(e))
        if _lib is None:
            raise RuntimeError(ERR_RUNTIME, "cannot find libcvml.so (set CVML_LIBRARY)" +
                               ("; " + "; ".join(errors) if errors else ""))
    return _lib


def version():
    """The library version string."""
    return load_library().cvml_version().decode()


class TensorInfo:
    """Name, shape, verified precision (bits) and upstream byte type of a tensor."""

    def __init__(self, name, shape, precision, dtype):
        self.name, self.shape, self.precision, self.dtype = name, shape, precision, dtype

    def __repr__(self):
        return "TensorInfo(name=%r, shape=%r, precision=%d, dtype=%s)" % (
            self.name, self.shape, self.precision, np.dtype(self.dtype).name)

    def __eq__(self, other):
        return isinstance(other, TensorInfo) and (self.name, self.shape, self.precision,
                                                  np.dtype(self.dtype)) == (
            other.name, other.shape, other.precision, np.dtype(other.dtype))


def _tensor_info(lib, t):
    name = ctypes.c_char_p()
    lib.check(lib.cvml_tensor_name(t, ctypes.byref(name)), "tensor name")
    ndim = ctypes.c_int()
    dims = (ctypes.c_int32 * MAX_DIMS)()
    lib.check(lib.cvml_tensor_shape(t, ctypes.byref(ndim), dims), "tensor shape")
    prec = ctypes.c_int()
    lib.check(lib.cvml_tensor_precision(t, ctypes.byref(prec)), "tensor precision")
    dt = ctypes.c_int()
    lib.check(lib.cvml_tensor_dtype(t, ctypes.byref(dt)), "tensor dtype")
    return TensorInfo((name.value or b"").decode(), tuple(dims[i] for i in range(ndim.value)),
                      prec.value, np.int8 if dt.value == 1 else np.int32)


class Model:
    """A loaded, verified CVM model. Release it with close() or a `with` block."""

    def __init__(self, lib, ctx, graph):
        self._lib, self._ctx, self._g = lib, ctx, graph
        self._prerun = False

    @staticmethod
    def _context(lib, threads, devices):
        lib.check(lib.cvml_init(), "init")
        ctx = ctypes.c_void_p()
        rc = lib.cvml_context_create(ctypes.byref(ctx))
        if rc != OK:
            lib.cvml_release()
            lib.check(rc, "context")
        try:
            if threads is not None:
                lib.check(lib.cvml_context_set_threads(ctx, int(threads)), "threads")
            if devices:
                names = (ctypes.c_char_p * len(devices))(*[d.encode() for d in devices])
                lib.check(lib.cvml_context_set_devices(ctx, names, len(devices)), "devices")
        except CvmlError:
            lib.cvml_context_release(ctx)
            lib.cvml_release()
            raise
        return ctx

    @classmethod
    def from_files(cls, graph_path, params_path, threads=None, devices=None, library=None):
        """Loads a model from its graph JSON and params files."""
        lib = load_library(library)
        ctx = cls._context(lib, threads, devices)
        g = ctypes.c_void_p()
        rc = lib.cvml_graph_load_file(ctx, b"cvm", os.fsencode(graph_path),
                                      os.fsencode(params_path), ctypes.byref(g))
        if rc != OK:
            msg = lib.cvml_last_error()
            lib.cvml_context_release(ctx)
            lib.cvml_release()
            _raise(rc, "load %s: %s" % (graph_path, msg.decode("utf-8", "replace")),
                   _NoMessage())
        return cls(lib, ctx, g)

    @classmethod
    def load(cls, model, params=None, **options):
        """Loads a model named as the `cvml` tool names one: a directory holding
        model.json + model.params (or Cortex's symbol + params), a graph file (its params
        `params`, else NAME.params beside NAME.json, or params beside symbol), or a
        prefix (PREFIX.json + PREFIX.params). Options as for from_files()."""
        graph, found_params = _resolve_model(os.fspath(model))
        return cls.from_files(graph, params if params is not None else found_params, **options)

    @classmethod
    def from_bytes(cls, graph, params, threads=None, devices=None, library=None):
        """Loads a model from the bytes of its graph JSON and params blob."""
        if isinstance(graph, str):
            graph = graph.encode()
        graph, params = bytes(graph), bytes(params)
        lib = load_library(library)
        ctx = cls._context(lib, threads, devices)
        g = ctypes.c_void_p()
        gbuf = ctypes.create_string_buffer(graph, max(len(graph), 1))
        pbuf = ctypes.create_string_buffer(params, max(len(params), 1))
        rc = lib.cvml_graph_load_memory(ctx, b"cvm", ctypes.cast(gbuf, ctypes.c_void_p),
                                        len(graph), ctypes.cast(pbuf, ctypes.c_void_p),
                                        len(params), ctypes.byref(g))
        if rc != OK:
            msg = lib.cvml_last_error()
            lib.cvml_context_release(ctx)
            lib.cvml_release()
            _raise(rc, "load: %s" % msg.decode("utf-8", "replace"), _NoMessage())
        return cls(lib, ctx, g)

    # ---- lifetime ------------------------------------------------------------------
    def close(self):
        if self._g is not None:
            self._lib.cvml_graph_release(self._g)
            self._lib.cvml_context_release(self._ctx)
            self._lib.cvml_release()
            self._g = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def _graph(self):
        if self._g is None:
            raise LogicError(ERR_LOGIC, "the model is closed")
        return self._g

    # ---- facts ---------------------------------------------------------------------
    @property
    def gas(self):
        v = ctypes.c_uint64()
        self._lib.check(self._lib.cvml_graph_gas(self._graph(), ctypes.byref(v)), "gas")
        return v.value

    @property
    def gas_split(self):
        """(operations, memory); their sum is gas."""
        ops, mem = ctypes.c_uint64(), ctypes.c_uint64()
        self._lib.check(self._lib.cvml_graph_gas_split(self._graph(), ctypes.byref(ops),
                                                       ctypes.byref(mem)), "gas")
        return ops.value, mem.value

    @property
    def version(self):
        v = ctypes.c_char_p()
        self._lib.check(self._lib.cvml_graph_version(self._graph(), ctypes.byref(v)), "version")
        return (v.value or b"").decode()

    @property
    def postprocess(self):
        v = ctypes.c_char_p()
        self._lib.check(self._lib.cvml_graph_postprocess(self._graph(), ctypes.byref(v)),
                        "postprocess")
        return (v.value or b"").decode()

    def _tensors(self, count_fn, get_fn, what):
        n = ctypes.c_int()
        self._lib.check(count_fn(self._graph(), ctypes.byref(n)), what)
        out = []
        for i in range(n.value):
            t = ctypes.c_void_p()
            self._lib.check(get_fn(self._graph(), i, ctypes.byref(t)), what)
            out.append(t)
        return out

    @property
    def inputs(self):
        return [_tensor_info(self._lib, t) for t in self._tensors(
            self._lib.cvml_graph_input_count, self._lib.cvml_graph_get_input, "inputs")]

    @property
    def outputs(self):
        return [_tensor_info(self._lib, t) for t in self._tensors(
            self._lib.cvml_graph_output_count, self._lib.cvml_graph_get_output, "outputs")]

    def byte_sizes(self):
        """((input length, type size), (output length, type size)) in upstream's bytes."""
        il, it, ol, ot = ctypes.c_size_t(), ctypes.c_int(), ctypes.c_size_t(), ctypes.c_int()
        g = self._graph()
        self._lib.check(self._lib.cvml_graph_input_bytes(g, ctypes.byref(il), ctypes.byref(it)),
                        "input bytes")
        self._lib.check(self._lib.cvml_graph_output_bytes(g, ctypes.byref(ol), ctypes.byref(ot)),
                        "output bytes")
        return (il.value, it.value), (ol.value, ot.value)

    # ---- running -------------------------------------------------------------------
    def run(self, *arrays):
        """Runs on numpy arrays, one per input: integer dtype, the input's shape (up to
        leading 1s), values that fit its type (int8 or int32). Returns one numpy array
        per output, shaped, in the output's type (int8 or int32)."""
        g = self._graph()
        ins = self._tensors(self._lib.cvml_graph_input_count, self._lib.cvml_graph_get_input,
                            "inputs")
        if len(arrays) != len(ins):
            raise LogicError(ERR_LOGIC, "the model takes %d input(s), got %d" % (
                len(ins), len(arrays)))
        for t, a in zip(ins, arrays):
            info = _tensor_info(self._lib, t)
            buf = _checked_input(np.asarray(a), info)
            self._lib.check(self._lib.cvml_tensor_set_i32(
                t, buf.ctypes.data_as(ctypes.c_void_p), buf.size), "set input")
        self._lib.check(self._lib.cvml_graph_run(g), "run")
        outs = []
        for t in self._tensors(self._lib.cvml_graph_output_count,
                               self._lib.cvml_graph_get_output, "outputs"):
            info = _tensor_info(self._lib, t)
            o = np.empty(info.shape, dtype=np.int32)
            self._lib.check(self._lib.cvml_tensor_get_i32(
                t, o.ctypes.data_as(ctypes.c_void_p), o.size), "get output")
            # The values fit: the output's type comes from its verified precision.
            outs.append(o.astype(info.dtype))
        return outs

    def run_bytes(self, data):
        """Runs on upstream's input bytes and returns upstream's output bytes, exactly
        as CVMAPIInference would (all outputs, post-processing applied)."""
        g = self._graph()
        if isinstance(data, np.ndarray):
            data = data.tobytes()
        data = bytes(data)
        (_, _), (out_len, _) = self.byte_sizes()
        inb = ctypes.create_string_buffer(data, max(len(data), 1))
        outb = ctypes.create_string_buffer(max(out_len, 1))
        self._lib.check(self._lib.cvml_graph_run_bytes(
            g, ctypes.cast(inb, ctypes.c_void_p), len(data), ctypes.cast(outb, ctypes.c_void_p),
            out_len), "run")
        return outb.raw[:out_len]

    def run_upstream(self, array):
        """run_bytes() on a numpy array, decoded as a flat numpy array of upstream's
        output element type (int8 or int32)."""
        (_, in_type), (_, out_type) = self.byte_sizes()
        a = np.asarray(array)
        lo, hi = (-128, 127) if in_type == 1 else (-2**31, 2**31 - 1)
        if a.size and (a.min() < lo or a.max() > hi):
            raise LogicError(ERR_LOGIC, "input values do not fit the model's %s input bytes" % (
                "int8" if in_type == 1 else "int32"))
        raw = self.run_bytes(a.astype("<i1" if in_type == 1 else "<i4").tobytes())
        return np.frombuffer(raw, dtype="<i1" if out_type == 1 else "<i4").copy()


def _without_leading_ones(shape):
    """Shapes agree up to leading dimensions of 1, as in the `cvml` tool: Cortex's
    cpu.txt gives the (1, 3, 32, 32) input of its model as (3, 32, 32)."""
    shape = tuple(int(d) for d in shape)
    while len(shape) > 1 and shape[0] == 1:
        shape = shape[1:]
    return shape


def _checked_input(a, info):
    """The array as contiguous int32 for cvml_tensor_set_i32, after the checks the
    `cvml` tool makes: an integer array of the input's shape (up to leading 1s)
    whose values fit the input's element type (never clipped)."""
    if not np.issubdtype(a.dtype, np.integer):
        raise LogicError(ERR_LOGIC, "input '%s' must be an integer array, got %s" % (
            info.name, a.dtype))
    if _without_leading_ones(a.shape) != _without_leading_ones(info.shape):
        raise LogicError(ERR_LOGIC, "input '%s' has shape %s, got an array of shape %s" % (
            info.name, tuple(info.shape), tuple(a.shape)))
    bits = np.iinfo(info.dtype)
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < bits.min or hi > bits.max:
            bad = lo if lo < bits.min else hi
            raise LogicError(ERR_LOGIC, "input '%s': value %d does not fit %s" % (
                info.name, bad, np.dtype(info.dtype).name))
    return np.ascontiguousarray(a, dtype=np.int32)


def _resolve_model(model):
    """(graph path, params path) for a MODEL argument, as tools/cvml resolves it."""
    if os.path.isdir(model):
        for graph, params in (("model.json", "model.params"), ("symbol", "params")):
            if os.path.isfile(os.path.join(model, graph)):
                return os.path.join(model, graph), os.path.join(model, params)
        raise LogicError(ERR_LOGIC, "directory '%s' holds neither model.json nor symbol" % model)
    if os.path.isfile(model):
        head, base = os.path.split(model)
        if base == "symbol":
            return model, os.path.join(head, "params")
        if base.endswith(".json"):
            return model, model[:-len(".json")] + ".params"
        return model, model + ".params"
    if os.path.isfile(model + ".json"):
        return model + ".json", model + ".params"
    raise LogicError(ERR_LOGIC, "model '%s' not found: expected a directory, a graph file or a "
                     "prefix with PREFIX.json" % model)


class _NoMessage:
    """Stands in for the library in _raise() when the message was already taken."""

    @staticmethod
    def cvml_last_error():
        return b""
