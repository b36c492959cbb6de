import os
import sys

# The source tree's package, unless the tests run against an installed copy (which
# PYTHONPATH then names: tests/scripts/run_pytest_installed.sh).
if not os.environ.get("CVML_TEST_INSTALLED"):
    sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(__file__), "..")))
