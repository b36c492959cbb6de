"""The converter on small ONNX models built here: every supported operator against
the float model, run by cvm-lite; reproducible output; what upstream cannot run is
never emitted; gas from the graph file equals the loaded model's; bad input stops with
one line a reason and leaves no files."""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cvml
from cvml.convert import ConvertError, convert, quantize_input, write
from onnx_builder import Builder

FORBIDDEN = {"cvm_left_shift", "pad", "broadcast_min", "argmax", "argmin",
             "global_max_pool2d"}


def _calib(shape, n=64, seed=1):
    return np.random.RandomState(seed).rand(n, *shape[1:]).astype(np.float32)


# ---- models -------------------------------------------------------------------------

def conv_bn_relu_pool_gemm(b):
    x = b.batchnorm(b.conv("input", 1, 6), 6)
    c = b.rng
    x = b.node("Relu", [x])
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = b.node("Flatten", [x], axis=1)
    w = b.const((c.randn(10, 6 * 6 * 6) * 0.1).astype(np.float32))
    return b.node("Gemm", [x, w, b.const(np.zeros(10, np.float32))], transB=1)


def residual_gap(b):
    s = b.node("Relu", [b.conv("input", 1, 8)])
    y = b.node("Relu", [b.conv(s, 8, 8)])
    y = b.conv(y, 8, 8)
    y = b.node("Relu", [b.node("Add", [y, s])])
    y = b.node("GlobalAveragePool", [y])
    y = b.node("Flatten", [y])
    w = b.const((b.rng.randn(8, 5) * 0.5).astype(np.float32))
    return b.node("Gemm", [y, w, b.const(np.ones(5, np.float32))], transB=0, alpha=0.5,
                  beta=2.0)


def depthwise_relu6(b):
    lo, hi = b.const(np.float32(0)), b.const(np.float32(6))
    x = b.node("Clip", [b.conv("input", 1, 8), lo, hi])
    x = b.node("Clip", [b.conv(x, 8, 8, group=8, stride=2), lo, hi])
    x = b.conv(x, 8, 12, k=1, pad=0)
    x = b.node("Mul", [x, b.const(np.linspace(-1, 2, 12).reshape(1, 12, 1, 1)
                                  .astype(np.float32))])
    x = b.node("Relu", [x])
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Reshape", [x, b.const(np.array([1, 12], np.int64))])
    w = b.const((b.rng.randn(4, 12) * 0.5).astype(np.float32))
    return b.node("Gemm", [x, w], transB=1)


def coverage(b):
    x = b.node("Sub", ["input", b.const(np.float32(0.3))])
    x = b.node("Div", [x, b.const(np.float32(0.35))])
    x = b.node("Relu", [b.conv(x, 1, 6)])
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
               ceil_mode=1)
    c = b.rng
    x = b.batchnorm(x, 6)
    x = b.node("Identity", [x])
    a = b.node("Relu", [b.conv(x, 6, 4, k=1, pad=0)])
    d = b.node("Relu", [b.conv(x, 6, 4)])
    x = b.node("Concat", [a, d], axis=1)
    x = b.node("Pad", [x, b.const(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))])
    x = b.node("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2])
    x = b.node("Sigmoid", [b.conv(x, 8, 8)])
    x = b.node("Resize", [x, b.const(np.array([], np.float32)),
                          b.const(np.array([1, 1, 2, 2], np.float32))],
               mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")
    x = b.conv(x, 8, 6, stride=2)
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Squeeze", [x], axes=[2, 3])
    x = b.node("Unsqueeze", [x], axes=[1])
    x = b.node("Transpose", [x], perm=[0, 2, 1])
    x = b.node("Flatten", [x])
    w = b.const((c.randn(10, 6)).astype(np.float32))
    x = b.node("Gemm", [x, w, b.const(np.zeros(10, np.float32))], transB=1)
    return b.node("Softmax", [x], axis=1)


CASES = {
    "conv_bn_relu_pool_gemm": (conv_bn_relu_pool_gemm, (1, 1, 12, 12), 13),
    "residual_gap": (residual_gap, (1, 1, 10, 10), 17),
    "depthwise_relu6": (depthwise_relu6, (1, 1, 12, 12), 12),
    "coverage": (coverage, (1, 1, 16, 16), 11),
}


def build(case, tmp_path):
    fn, shape, opset = CASES[case]
    b = Builder(shape, opset=opset)
    out = fn(b)
    return b.save(out, tmp_path / (case + ".onnx")), shape


def dequantized_outputs(result, x):
    qt = result.quantizer.q[result.graph.outputs[0]]
    outs = []
    with cvml.Model.from_bytes(result.graph_json, result.params) as m:
        for i in range(len(x)):
            (o,) = m.run(quantize_input(x[i:i + 1], result.input_scale))
            outs.append(o.astype(np.float64) * qt.scale)
    return np.concatenate(outs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_converted_model_follows_the_float_model(case, tmp_path):
    path, shape = build(case, tmp_path)
    calib = _calib(shape)
    r = convert(path, calib)
    x = _calib(shape, n=16, seed=7)
    f = r.graph.run(x)[r.graph.outputs[0]].reshape(16, -1).astype(np.float64)
    q = dequantized_outputs(r, x).reshape(16, -1)
    cos = (f * q).sum() / np.sqrt((f * f).sum() * (q * q).sum())
    assert cos > 0.995, cos
    assert (np.argmax(f, 1) == np.argmax(q, 1)).mean() >= 0.85


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_is_what_upstream_runs(case, tmp_path):
    path, shape = build(case, tmp_path)
    r = convert(path, _calib(shape))
    doc = json.loads(r.graph_json)
    funcs = {n["attrs"]["func_name"] for n in doc["nodes"] if n["op"] == "cvm_op"}
    assert not funcs & FORBIDDEN
    prec = doc["attrs"]["precision"][1]
    for i, n in enumerate(doc["nodes"]):
        if n["op"] != "cvm_op":
            continue
        attrs = json.loads(doc["attrs"]["op_attrs"][1][i])
        if n["attrs"]["func_name"] == "cvm_right_shift":
            assert int(attrs["precision"]) + int(attrs["shift_bit"]) < 32
        if n["attrs"]["func_name"] in ("conv2d", "dense"):
            assert all(prec[j] <= 8 for j, _, _ in n["inputs"][:2])
    # The runtime re-infers every precision; the file's own must agree with it.
    with cvml.Model.from_bytes(r.graph_json, r.params) as m:
        assert m.gas == sum(r.cvm.gas()[:2])
        assert m.outputs[0].precision == prec[doc["heads"][0][0]]
        lib = m._lib.dll
    lib.CVMAPIGetGasFromGraphFile.argtypes = [ctypes.c_char_p,
                                              ctypes.POINTER(ctypes.c_ulonglong)]
    gas = ctypes.c_ulonglong()
    assert lib.CVMAPIGetGasFromGraphFile(r.graph_json.encode(), ctypes.byref(gas)) == 0
    assert gas.value == sum(r.cvm.gas()[:2])


def test_conversion_is_reproducible(tmp_path):
    path, shape = build("coverage", tmp_path)
    calib = _calib(shape)
    a = convert(path, calib)
    b = convert(path, calib)
    assert a.graph_json == b.graph_json and a.params == b.params
    write(a, str(tmp_path / "a"))
    write(b, str(tmp_path / "b"))
    for ext in (".json", ".params", ".quant.json"):
        assert (tmp_path / ("a" + ext)).read_bytes() == (tmp_path / ("b" + ext)).read_bytes()


@pytest.mark.parametrize("method", ["absmax", "percentile", "entropy", "mse", "mrt"])
def test_every_method_converts(method, tmp_path):
    path, shape = build("residual_gap", tmp_path)
    r = convert(path, _calib(shape), method=method)
    x = _calib(shape, n=8, seed=3)
    f = r.graph.run(x)[r.graph.outputs[0]].reshape(8, -1)
    q = dequantized_outputs(r, x).reshape(8, -1)
    assert np.corrcoef(f.ravel(), q.ravel())[0, 1] > 0.99
    assert r.quant_record()["method"] == method


def test_mrt_uses_its_scheme(tmp_path):
    path, shape = build("depthwise_relu6", tmp_path)
    r = convert(path, _calib(shape, n=100), method="mrt")
    rec = r.quant_record()
    assert rec["calibration_images"] == 16 and not rec["per_channel"]
    assert not rec["bias_correction"]


def test_bits_override_widens_a_tensor(tmp_path):
    path, shape = build("residual_gap", tmp_path)
    add = [n for n in convert(path, _calib(shape)).graph.nodes if n.op == "Add"][0]
    r = convert(path, _calib(shape), bits={add.name: 20})
    qt = r.quantizer.q[add.outputs[0]]
    assert qt.prec == 21  # two 20-bit operands at one scale
    with pytest.raises(ConvertError, match="no node or tensor"):
        convert(path, _calib(shape), bits={"no_such_node": 16})


# ---- the command and its errors -----------------------------------------------------

def run_cli(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-m", "cvml.convert"] + [str(a) for a in args],
                          capture_output=True, text=True, env=env, cwd=cwd)


def outputs_of(prefix):
    return [p for p in (str(prefix) + e for e in (".json", ".params", ".quant.json"))
            if os.path.exists(p)]


def test_cli_writes_three_files_and_reports(tmp_path):
    path, shape = build("conv_bn_relu_pool_gemm", tmp_path)
    calib = tmp_path / "calib.npy"
    np.save(calib, _calib(shape))
    p = run_cli(path, "--calibration", calib, "--out", tmp_path / "m", "--report")
    assert p.returncode == 0, p.stderr
    assert len(outputs_of(tmp_path / "m")) == 3
    assert "gas:" in p.stdout and "requantization glue" in p.stdout
    assert "params:" in p.stdout and "sqnr_db" in p.stdout
    rec = json.loads((tmp_path / "m.quant.json").read_text())
    assert rec["input"]["scale"] > 0 and rec["thresholds"]


def test_cli_evaluate_line(tmp_path):
    path, shape = build("conv_bn_relu_pool_gemm", tmp_path)
    np.save(tmp_path / "calib.npy", _calib(shape))
    np.save(tmp_path / "x.npy", _calib(shape, n=20, seed=5))
    np.save(tmp_path / "y.npy", np.arange(20) % 10)
    p = run_cli(path, "--calibration", tmp_path / "calib.npy", "--out", tmp_path / "m",
                "--evaluate", tmp_path / "x.npy", tmp_path / "y.npy")
    assert p.returncode == 0, p.stderr
    last = p.stdout.strip().splitlines()[-1].split()
    assert last[0] == "evaluate:" and last[1::2] == ["float_top1", "cvm_top1", "agreement",
                                                      "images"]
    assert last[-1] == "20"


def expect_failure(tmp_path, model, calib, *needles, lines=None):
    prefix = tmp_path / "bad"
    p = run_cli(model, "--calibration", calib, "--out", prefix)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    err = p.stderr.strip().splitlines()
    for needle in needles:
        assert needle in p.stderr, p.stderr
    if lines is not None:
        assert len(err) == lines, err
    assert outputs_of(prefix) == []
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]
    return err


def _save_calib(tmp_path, shape):
    path = tmp_path / "calib.npy"
    np.save(path, _calib(shape))
    return path


def test_every_unsupported_node_is_listed(tmp_path):
    b = Builder((1, 1, 8, 8))
    x = b.node("Tanh", [b.conv("input", 1, 4)], name="first_tanh")
    x = b.node("LeakyRelu", [x], name="the_leaky")
    x = b.node("Tanh", [x], name="second_tanh")
    path = b.save(x, tmp_path / "m.onnx")
    err = expect_failure(tmp_path, path, _save_calib(tmp_path, (1, 1, 8, 8)),
                         "node first_tanh (Tanh, opset 13): operator Tanh is not supported",
                         "node the_leaky (LeakyRelu, opset 13)", "node second_tanh (Tanh",
                         lines=3)
    assert all(line.startswith("cvml-convert: node ") for line in err)


def test_asymmetric_pads_and_bad_resize(tmp_path):
    b = Builder((1, 1, 8, 8), opset=13)
    w = b.const(np.ones((2, 1, 3, 3), np.float32))
    x = b.node("Conv", ["input", w], name="lopsided", kernel_shape=[3, 3], pads=[0, 0, 1, 1])
    x = b.node("Resize", [x, b.const(np.array([], np.float32)),
                          b.const(np.array([1, 1, 2, 2], np.float32))], name="smooth",
               mode="linear")
    x = b.node("Resize", [x, b.const(np.array([], np.float32)),
                          b.const(np.array([1, 1, 1.5, 1.5], np.float32))], name="odd",
               mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")
    path = b.save(x, tmp_path / "m.onnx")
    expect_failure(tmp_path, path, _save_calib(tmp_path, (1, 1, 8, 8)),
                   "node lopsided (Conv, opset 13): asymmetric pads [0, 0, 1, 1]",
                   "node smooth (Resize, opset 13): Resize mode linear",
                   "node odd (Resize, opset 13): Resize scales")


def test_dynamic_batch(tmp_path):
    b = Builder((1, 1, 8, 8))
    path = b.save(b.node("Relu", [b.conv("input", 1, 2)]), tmp_path / "m.onnx",
                  batch_dim="N")
    expect_failure(tmp_path, path, _save_calib(tmp_path, (1, 1, 8, 8)),
                   "dimension N is not fixed", lines=1)


def test_precision_that_cannot_be_kept(tmp_path):
    # Weights of 1e-7 against a bias of 100: the bias would need 40 bits at the
    # accumulator's scale.
    b = Builder((1, 1, 6, 6))
    w = b.const(np.full((2, 1, 3, 3), 1e-7, np.float32))
    bias = b.const(np.full(2, 100.0, np.float32))
    x = b.node("Conv", ["input", w, bias], name="tiny", kernel_shape=[3, 3], pads=[1] * 4)
    path = b.save(b.node("Relu", [x]), tmp_path / "m.onnx")
    expect_failure(tmp_path, path, _save_calib(tmp_path, (1, 1, 6, 6)),
                   "node tiny (Conv, opset 13): the bias does not fit 31 bits", lines=1)


def test_malformed_and_truncated_onnx(tmp_path):
    calib = _save_calib(tmp_path, (1, 1, 8, 8))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07not an onnx model at all" * 5)
    expect_failure(tmp_path, junk, calib, "not a readable ONNX model", lines=1)
    path, _ = build("conv_bn_relu_pool_gemm", tmp_path)
    data = open(path, "rb").read()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[:len(data) // 2])
    expect_failure(tmp_path, cut, calib, "not a readable ONNX model", lines=1)
    expect_failure(tmp_path, tmp_path / "absent.onnx", calib, "not a readable ONNX model")


def test_calibration_of_the_wrong_shape(tmp_path):
    path, _ = build("conv_bn_relu_pool_gemm", tmp_path)
    bad = tmp_path / "bad_calib.npy"
    np.save(bad, np.zeros((4, 3, 12, 12), np.float32))
    expect_failure(tmp_path, path, bad, "calibration data of shape [4, 3, 12, 12] does not "
                   "match the model's input [1, 1, 12, 12]", lines=1)
    text = tmp_path / "text.npy"
    text.write_text("hello")
    expect_failure(tmp_path, path, text, "cannot read it as .npy", lines=1)


def test_usage_errors_exit_64(tmp_path):
    p = run_cli("m.onnx", "--out", tmp_path / "x")
    assert p.returncode == 64 and "--calibration" in p.stderr


def test_hostile_shapes_are_refused_before_allocating(tmp_path):
    calib = tmp_path / "calib.npy"
    np.save(calib, np.zeros((1, 1, 4, 4), np.float32))
    b = Builder((1, 1, 100000, 100000))
    path = b.save(b.node("Relu", ["input"]), tmp_path / "huge.onnx")
    expect_failure(tmp_path, path, calib, "outside CVM's limits", lines=1)
    b = Builder((1, 1, 64, 64))
    x = b.node("Resize", ["input", b.const(np.array([], np.float32)),
                          b.const(np.array([1, 1, 4096, 4096], np.float32))], name="blowup",
               mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")
    path = b.save(x, tmp_path / "blowup.onnx")
    np.save(calib, np.zeros((2, 1, 64, 64), np.float32))
    expect_failure(tmp_path, path, calib, "node blowup (Resize) output", lines=1)
