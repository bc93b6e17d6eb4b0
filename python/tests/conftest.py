"""conftest.py: the package under test (PYTHONPATH=build/python) and a private code cache."""
import os
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")

# a private cache folder unless the suite (tests/run.sh) already gave one
if "CACHET_CACHE_DIR" not in os.environ:
    os.environ["CACHET_CACHE_DIR"] = tempfile.mkdtemp(prefix="cachet-pytest-")


@pytest.fixture
def example():
    """example("matmul") -> the path of examples/matmul.cachet."""
    return lambda name: os.path.join(EXAMPLES, name + ".cachet")
