"""The project's own code passes its linters: ruff (pyflakes, pycodestyle, import order,
bugbear; rules in pyproject.toml) and mypy (types; every public API function typed). Skipped
where the tools are not installed (they are not runtime dependencies)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if exe is None or not (ROOT / "pyproject.toml").is_file():
        pytest.skip(f"{name} is not installed (pip install {name}), or no source tree")
    return exe


def test_ruff_is_clean() -> None:
    out = subprocess.run([_tool("ruff"), "check", "--no-cache", "src", "tests", "scripts",
                          "benchmarks"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    out = subprocess.run([_tool("mypy"), "--no-incremental", "--cache-dir", os.devnull],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "scripts").glob("*.py")))
def test_scripts_start(script: str) -> None:
    """Every script imports what it uses (``--help`` parses its options after the imports)."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--help"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0 and "usage:" in out.stdout, out.stderr[-3000:]
