"""pytest setup of the converter's tests: the source package on the path, and the
optional pieces (onnx, the Fashion-MNIST dataset, the runtime library) as skips that
say what is missing."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("CVML_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
if not os.environ.get("CVML_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(SOURCE, "python"))
sys.path.insert(0, HERE)

try:
    import onnx  # noqa: F401
except ImportError:  # pragma: no cover
    pytest.skip("python3-onnx is not installed (scripts/install_deps.sh installs it)",
                allow_module_level=True)
