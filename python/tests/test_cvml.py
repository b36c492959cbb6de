"""Tests of the ctypes binding. CVML_LIBRARY names the built libcvml.so;
CVML_SOURCE_DIR the source tree (for the bundled model and the conformance cases)."""
import builtins
import glob
import json
import os

import numpy as np
import pytest

import cvml

SOURCE = os.environ.get("CVML_SOURCE_DIR",
                        os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..")))
MODEL_DIR = os.path.join(SOURCE, "examples", "models")
MODEL = os.path.join(MODEL_DIR, "tiny_convnet")


def conformance_dirs():
    base = os.path.join(SOURCE, "tests", "conformance", "cases")
    return sorted(d for d in glob.glob(os.path.join(base, "*"))
                  if os.path.isfile(os.path.join(d, "meta.json")))


CASES = conformance_dirs()


def test_version_is_semver():
    parts = cvml.version().split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)


def test_error_classes():
    assert issubclass(cvml.LogicError, cvml.CvmlError)
    assert issubclass(cvml.RuntimeError, cvml.CvmlError)
    assert issubclass(cvml.RuntimeError, builtins.RuntimeError)
    assert not issubclass(cvml.LogicError, cvml.RuntimeError)


def test_missing_file_is_a_logic_error(tmp_path):
    with pytest.raises(cvml.LogicError) as e:
        cvml.Model.from_files(str(tmp_path / "none.json"), str(tmp_path / "none.params"))
    assert e.value.status == 1
    assert "none.json" in str(e.value)


def test_garbage_bytes_raise_a_classified_error():
    with pytest.raises(cvml.CvmlError) as e:
        cvml.Model.from_bytes(b"{not json", b"")
    assert e.value.status in (1, 2)
    assert str(e.value)


def test_unknown_device_is_a_logic_error():
    with pytest.raises(cvml.LogicError):
        cvml.Model.from_bytes(b"{}", b"", devices=["no-such-device"])


def test_bad_thread_count_is_a_logic_error():
    with pytest.raises(cvml.LogicError):
        cvml.Model.from_bytes(b"{}", b"", threads=0)


def test_bundled_model_facts_and_output():
    expected = json.load(open(os.path.join(MODEL_DIR, "tiny_convnet.expected.json")))
    with cvml.Model.from_files(MODEL + ".json", MODEL + ".params") as m:
        assert m.gas == expected["gas"]
        ops, mem = m.gas_split
        assert ops + mem == m.gas
        (inp,) = m.inputs
        assert inp.name == "data" and inp.shape == (1, 1, 12, 12) and inp.precision == 8
        assert inp.dtype == np.int8
        image = np.fromfile(MODEL + ".input.bin", dtype=np.int8).reshape(1, 1, 12, 12)
        (out,) = m.run(image)
        assert out.shape == (1, 10) and out.dtype == m.outputs[0].dtype == np.int8
        assert out.ravel().tolist() == expected["output"]
        # the same run through upstream's bytes
        assert m.run_upstream(image).tolist() == expected["output"]


def test_from_bytes_equals_from_files():
    graph = open(MODEL + ".json", "rb").read()
    params = open(MODEL + ".params", "rb").read()
    image = np.fromfile(MODEL + ".input.bin", dtype=np.int8)
    with cvml.Model.from_bytes(graph, params, threads=2) as a, \
            cvml.Model.from_files(MODEL + ".json", MODEL + ".params") as b:
        assert a.gas == b.gas
        assert a.run_bytes(image.tobytes()) == b.run_bytes(image.tobytes())


def test_bad_inputs_raise_logic_errors():
    with cvml.Model.from_files(MODEL + ".json", MODEL + ".params") as m:
        with pytest.raises(cvml.LogicError):
            m.run(np.zeros(5, dtype=np.int32))
        with pytest.raises(cvml.LogicError):
            m.run(np.zeros(144, dtype=np.float32))
        with pytest.raises(cvml.LogicError):
            m.run()
        with pytest.raises(cvml.LogicError) as e:
            m.run_bytes(b"\x00" * 7)
        assert e.value.status == 1
    with pytest.raises(cvml.LogicError):
        m.gas  # closed


def test_inputs_are_checked_as_the_cli_checks_them():
    """Values that do not fit the input's type are refused, never clipped; the shape
    must be the input's (the same element count in another shape is refused)."""
    image = np.fromfile(MODEL + ".input.bin", dtype=np.int8).reshape(1, 1, 12, 12)
    with cvml.Model.from_files(MODEL + ".json", MODEL + ".params") as m:
        big = image.astype(np.int32)
        big[0, 0, 3, 4] = 300
        with pytest.raises(cvml.LogicError, match="value 300 does not fit int8"):
            m.run(big)
        with pytest.raises(cvml.LogicError, match=r"shape \(1, 1, 12, 12\)"):
            m.run(image.reshape(1, 12, 12, 1))
        with pytest.raises(cvml.LogicError):
            m.run(image.ravel())
        # leading dimensions of 1 may be left out (Cortex's cpu.txt does)
        (c,) = m.run(image.reshape(1, 12, 12))
        # int8 and wider integer arrays holding the same values give the same output
        (a,) = m.run(image)
        (b,) = m.run(image.astype(np.int64))
        assert a.dtype == b.dtype == np.int8 and a.tolist() == b.tolist() == c.tolist()


def test_load_names_models_as_the_cli_does(tmp_path):
    """A prefix, a graph file and a directory in either layout name the same model."""
    import shutil
    want = json.load(open(os.path.join(MODEL_DIR, "tiny_convnet.expected.json")))["gas"]
    conformance = tmp_path / "case"
    cortex = tmp_path / "cortex"
    for d, (g, p) in ((conformance, ("model.json", "model.params")),
                      (cortex, ("symbol", "params"))):
        d.mkdir()
        shutil.copy(MODEL + ".json", str(d / g))
        shutil.copy(MODEL + ".params", str(d / p))
    for name in (MODEL, MODEL + ".json", str(conformance), str(cortex), str(cortex / "symbol")):
        with cvml.Model.load(name) as m:
            assert m.gas == want, name
    with pytest.raises(cvml.LogicError, match="not found"):
        cvml.Model.load(str(tmp_path / "missing"))
    with pytest.raises(cvml.LogicError, match="neither"):
        cvml.Model.load(str(tmp_path))


def test_package_finds_the_library_it_is_installed_with():
    """An installed copy records where libcvml.so is relative to itself; a source
    copy has no record and uses CVML_LIBRARY or the search path."""
    installed = cvml._installed_library()
    if installed is None:
        assert not os.path.exists(os.path.join(os.path.dirname(cvml.__file__), "_install.py"))
    else:
        assert os.path.isfile(installed), installed
        if "CVML_LIBRARY" not in os.environ:
            assert os.path.samefile(cvml.load_library().path, installed)


def error_class(exp):
    return cvml.LogicError if exp.get("class") == "logic" else cvml.RuntimeError


def read_case(case):
    meta = json.load(open(os.path.join(case, "meta.json")))
    files = [os.path.join(case, f) for f in ("model.json", "model.params")]
    graph, params = (open(f, "rb").read() for f in files)
    return meta, files, graph, params


def test_conformance_cases_from_bytes():
    """Every case through from_bytes and upstream's byte I/O: gas, output bytes, and
    the error class of every refused model or run."""
    checked = 0
    for case in CASES:
        meta, _, graph, params = read_case(case)
        exp = meta.get("expect", {})
        outcome = exp.get("outcome")
        if outcome == "load_error":
            with pytest.raises(error_class(exp), match=".+") as e:
                cvml.Model.from_bytes(graph, params)
            assert e.value.status == (1 if exp["class"] == "logic" else 2), case
            checked += 1
        elif outcome in ("ok", "inference_error"):
            with cvml.Model.from_bytes(graph, params) as m:
                assert m.gas == exp["gas"], case
                data = open(os.path.join(case, "input.bin"), "rb").read()
                if outcome == "ok":
                    want = open(os.path.join(case, exp["output"]), "rb").read()
                    assert m.run_bytes(data) == want, case
                else:
                    with pytest.raises(error_class(exp), match=".+"):
                        m.run_bytes(data)
            checked += 1
    assert checked == sum(1 for c in CASES if json.load(open(os.path.join(c, "meta.json")))
                          ["expect"]["outcome"] in ("ok", "inference_error", "load_error"))
    assert checked > 100


def test_conformance_cases_from_files_with_numpy():
    """Every runnable case through from_files and numpy: the input decoded from its
    bytes, the outputs compared with the expected bytes (through run_upstream, and
    through run() for one output without post-processing)."""
    checked_numpy = 0
    for case in CASES:
        meta, files, _, _ = read_case(case)
        exp = meta.get("expect", {})
        outcome = exp.get("outcome")
        if outcome == "load_error":
            with pytest.raises(error_class(exp)):
                cvml.Model.from_files(*files)
            continue
        if outcome != "ok":
            continue
        with cvml.Model.from_files(*files, threads=2) as m:
            assert m.gas == exp["gas"], case
            (in_len, in_type), (out_len, out_type) = m.byte_sizes()
            up = meta["upstream"]
            assert (in_len, in_type, out_len, out_type) == (
                up["input_length"], up["input_type_size"], up["output_length"],
                up["output_type_size"]), case
            raw = open(os.path.join(case, "input.bin"), "rb").read()
            want = open(os.path.join(case, exp["output"]), "rb").read()
            array = np.frombuffer(raw, dtype="<i1" if in_type == 1 else "<i4")
            wanted = np.frombuffer(want, dtype="<i1" if out_type == 1 else "<i4")
            assert m.run_upstream(array).tolist() == wanted.tolist(), case
            # several outputs are interleaved row by row in upstream's bytes
            if len(m.inputs) == 1 and len(m.outputs) == 1 and not m.postprocess:
                outs = m.run(array.reshape(m.inputs[0].shape))
                assert [o.dtype for o in outs] == [o.dtype for o in m.outputs], case
                assert [o.shape for o in outs] == [o.shape for o in m.outputs], case
                flat = np.concatenate([o.ravel() for o in outs])
                assert flat.tolist() == wanted.tolist(), case
                checked_numpy += 1
    assert checked_numpy > 50


REAL = os.path.join(SOURCE, "..", "shared", "models", "cifar_resnet20_2019")
REAL_OUTPUT = [20, 53, -18, -4, -48, -17, -32, -29, -14, 89]


def read_text_tensor(path):
    """Upstream's text layouts: cpu.txt (ndim, the shape, the values) and result_0.txt
    (a count, then the values)."""
    tokens = [int(v) for v in open(path).read().split()]
    if len(tokens) == tokens[0] + 1:
        return np.array(tokens[1:], dtype=np.int32)
    ndim = tokens[0]
    shape = tuple(tokens[1:1 + ndim])
    values = np.array(tokens[1 + ndim:], dtype=np.int32)
    assert values.size == int(np.prod(shape)), path
    return values.reshape(shape)


needs_real = pytest.mark.skipif(not os.path.isfile(os.path.join(REAL, "symbol")),
                                reason="no real model at %s (../shared is absent)" % REAL)


@needs_real
def test_real_model_from_files_and_bytes():
    image = read_text_tensor(os.path.join(REAL, "cpu.txt"))
    want = read_text_tensor(os.path.join(REAL, "result_0.txt")).ravel().tolist()
    assert want == REAL_OUTPUT
    graph = open(os.path.join(REAL, "symbol"), "rb").read()
    params = open(os.path.join(REAL, "params"), "rb").read()
    with cvml.Model.from_files(os.path.join(REAL, "symbol"), os.path.join(REAL, "params"),
                               threads=2) as a, cvml.Model.from_bytes(graph, params) as b:
        assert a.gas == b.gas == 137396206
        (inp,) = a.inputs
        (out,) = a.run(image.reshape(inp.shape))
        assert out.dtype == a.outputs[0].dtype == np.int8 and out.shape == a.outputs[0].shape
        assert out.ravel().tolist() == REAL_OUTPUT
        assert b.run_upstream(image).tolist() == REAL_OUTPUT
        # a wrong-size input keeps its class and the model stays usable
        with pytest.raises(cvml.LogicError):
            b.run(image.ravel()[:-1])
        assert b.run(image.reshape(inp.shape))[0].ravel().tolist() == REAL_OUTPUT


@needs_real
def test_real_model_with_truncated_params_is_refused_with_its_class():
    graph = open(os.path.join(REAL, "symbol"), "rb").read()
    params = open(os.path.join(REAL, "params"), "rb").read()
    with pytest.raises(cvml.CvmlError, match=".+") as e:
        cvml.Model.from_bytes(graph, params[: len(params) // 2])
    assert type(e.value) in (cvml.LogicError, cvml.RuntimeError)
    assert e.value.status == (1 if isinstance(e.value, cvml.LogicError) else 2)
