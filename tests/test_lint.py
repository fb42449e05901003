"""The package is ruff- and mypy-clean under the configuration in pyproject.toml (the developers'
bar: type hints, lint, mypy --strict on the core stages through the overrides there)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (pip install -e '.[test]')")
def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "tcpsack_analyze")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing() -> None:
    pytest.importorskip("mypy")
    done = _run(sys.executable, "-m", "mypy", "tcpsack_analyze")
    assert done.returncode == 0, done.stdout + done.stderr
