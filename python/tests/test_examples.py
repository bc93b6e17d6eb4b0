"""test_examples.py: every script of examples/python runs to the end."""
import glob
import os
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "examples", "python", "*.py")))


def test_there_are_examples():
    assert len(SCRIPTS) >= 3


@pytest.mark.parametrize("script", SCRIPTS, ids=os.path.basename)
def test_example_runs(script, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, script, str(tmp_path / "out")], env=env, cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
