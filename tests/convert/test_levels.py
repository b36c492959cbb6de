"""Converted models (the small ones built here and the reference models) pass `cvml
validate`, charge the same gas from the graph file as loaded, and give the same bytes
at every SIMD level and thread count: each level runs in its own process (CVML_SIMD
is read once), at 1, 2 and 3 threads."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

import cvml
from cvml.convert import convert, write
from test_convert import CASES, _calib, build

LEVELS = ("scalar", "avx2", "avx512")

RUNNER = r"""
import hashlib, sys
import numpy as np
import cvml
prefix, inputs = sys.argv[1], np.load(sys.argv[2])
for threads in (1, 2, 3):
    h = hashlib.sha256()
    with cvml.Model.from_files(prefix + ".json", prefix + ".params", threads=threads) as m:
        for x in inputs:
            h.update(m.run_bytes(x.tobytes()))
    print(threads, h.hexdigest())
"""


MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
REFERENCE = sorted(f[:-5] for f in os.listdir(MODELS) if f.endswith(".onnx"))


def _model(case, tmp_path):
    if case in CASES:
        return build(case, tmp_path)
    return os.path.join(MODELS, case + ".onnx"), (1, 1, 28, 28)


@pytest.mark.parametrize("case", sorted(CASES) + REFERENCE)
def test_same_bytes_at_every_level_and_thread_count(case, tmp_path):
    path, shape = _model(case, tmp_path)
    r = convert(path, _calib(shape))
    prefix = str(tmp_path / case)
    write(r, prefix)
    tool = os.path.join(os.path.dirname(os.environ.get("CVML_LIBRARY", "")), "tools", "cvml")
    if os.path.exists(tool):
        v = subprocess.run([tool, "validate", prefix], capture_output=True, text=True)
        assert v.returncode == 0 and v.stderr == "" and ": valid (" in v.stdout, (v.stdout,
                                                                                  v.stderr)
    # The gas of the graph file alone (CVMAPIGetGasFromGraphFile) is the loaded model's.
    with cvml.Model.from_files(prefix + ".json", prefix + ".params") as m:
        lib = m._lib.dll
        loaded_gas = m.gas
    lib.CVMAPIGetGasFromGraphFile.argtypes = [ctypes.c_char_p,
                                              ctypes.POINTER(ctypes.c_ulonglong)]
    gas = ctypes.c_ulonglong()
    assert lib.CVMAPIGetGasFromGraphFile(r.graph_json.encode(), ctypes.byref(gas)) == 0
    assert gas.value == loaded_gas == sum(r.cvm.gas()[:2])
    x = np.random.RandomState(11).randint(-127, 128, size=(12,) + tuple(shape)).astype(np.int8)
    np.save(tmp_path / "inputs.npy", x)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    seen = {}
    for level in LEVELS:
        env["CVML_SIMD"] = level
        p = subprocess.run([sys.executable, "-c", RUNNER, prefix, str(tmp_path / "inputs.npy")],
                           capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        seen[level] = p.stdout.split()
    digests = {d for v in seen.values() for d in v[1::2]}
    assert len(digests) == 1, seen
