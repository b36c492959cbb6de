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
    for base in (os.path.join(SOURCE, "tests", "conformance", "cases"),
                 os.path.join(SOURCE, "..", "shared", "conformance", "cases")):
        if os.path.isdir(base):
            return sorted(d for d in glob.glob(os.path.join(base, "*"))
                          if os.path.isfile(os.path.join(d, "meta.json")))
    return []


CASES = conformance_dirs()


def has_bundled_model():
    return os.path.exists(MODEL + ".json")


needs_model = pytest.mark.skipif(not has_bundled_model(), reason="no bundled example model")


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


@needs_model
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
        assert out.shape == (1, 10) and out.dtype == np.int32
        assert out.ravel().tolist() == expected["output"]
        # the same run through upstream's bytes
        assert m.run_upstream(image).tolist() == expected["output"]


@needs_model
def test_from_bytes_equals_from_files():
    graph = open(MODEL + ".json", "rb").read()
    params = open(MODEL + ".params", "rb").read()
    image = np.fromfile(MODEL + ".input.bin", dtype=np.int8)
    with cvml.Model.from_bytes(graph, params, threads=2) as a, \
            cvml.Model.from_files(MODEL + ".json", MODEL + ".params") as b:
        assert a.gas == b.gas
        assert a.run_bytes(image.tobytes()) == b.run_bytes(image.tobytes())


@needs_model
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


def library_has_byte_io():
    # The byte I/O calls land with the CVM serializer; a library without them cannot load
    # files yet (the tool and the examples wait for them too).
    import ctypes
    return hasattr(ctypes.CDLL(cvml.load_library().path), "cvml_graph_run_bytes")


@pytest.mark.skipif(not CASES, reason="no conformance cases")
@pytest.mark.skipif(not library_has_byte_io(), reason="the library has no CVM serializer yet")
def test_conformance_cases():
    checked = 0
    for case in CASES:
        meta = json.load(open(os.path.join(case, "meta.json")))
        exp = meta.get("expect", {})
        graph = open(os.path.join(case, "model.json"), "rb").read()
        params = open(os.path.join(case, "model.params"), "rb").read()
        outcome = exp.get("outcome")
        if outcome == "load_error":
            cls = cvml.LogicError if exp.get("class") == "logic" else cvml.RuntimeError
            with pytest.raises(cls, match=".+"):
                cvml.Model.from_bytes(graph, params)
            checked += 1
        elif outcome in ("ok", "inference_error"):
            with cvml.Model.from_bytes(graph, params) as m:
                assert m.gas == exp["gas"], case
                data = open(os.path.join(case, "input.bin"), "rb").read()
                if outcome == "ok":
                    want = open(os.path.join(case, exp["output"]), "rb").read()
                    assert m.run_bytes(data) == want, case
                else:
                    cls = cvml.LogicError if exp.get("class") == "logic" else cvml.RuntimeError
                    with pytest.raises(cls):
                        m.run_bytes(data)
            checked += 1
    assert checked > 0
