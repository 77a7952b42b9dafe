"""The house rules run with the tests: ruff over the whole checkout, mypy over the package
(settings in pyproject.toml). Both are pinned in the test extra so every machine sees the same
findings."""

import subprocess
import sys

import pytest

from tests.helpers import ROOT


@pytest.mark.parametrize("tool", [["ruff", "check", "--no-cache", "."], ["mypy"]],
                         ids=["ruff", "mypy"])
def test_the_checkout_passes(tool):
    done = subprocess.run([sys.executable, "-m", *tool], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
