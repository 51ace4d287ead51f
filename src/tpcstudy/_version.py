"""The installed version of tpcstudy (pyproject.toml's version, from the package metadata) and the
commit it runs from: the checkout's own for an editable install, else the one the build recorded
(``_build.py``, written by CMakeLists.txt), so a non-editable install keeps it too."""

from __future__ import annotations

import importlib
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Optional, Tuple

__all__ = ["__version__", "source_commit", "version_line"]

try:
    __version__ = metadata.version("tpcstudy")
except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

# src/tpcstudy/_version.py -> the checkout's root (only when this file really sits in one)
_CHECKOUT = Path(__file__).resolve().parents[2]


def _in_checkout() -> bool:
    return ((_CHECKOUT / ".git").exists()
            and (_CHECKOUT / "src" / "tpcstudy" / "_version.py").is_file()
            and (_CHECKOUT / "pyproject.toml").is_file())


def _git(*argv: str) -> Optional[str]:
    try:
        out = subprocess.run(["git", *argv], cwd=_CHECKOUT, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def source_commit() -> Tuple[Optional[str], Optional[bool]]:
    """``(commit, modified)``: the commit tpcstudy runs from and whether tracked files differ
    from it; ``(None, None)`` when neither a checkout nor the build says."""
    if _in_checkout():  # never ask git from an installed copy: it would name the user's repository
        head = _git("rev-parse", "HEAD")
        if head and head.strip():
            status = _git("status", "--porcelain", "--untracked-files=no")
            return head.strip(), (bool(status.strip()) if status is not None else None)
    try:
        build = importlib.import_module("tpcstudy._build")
    except ImportError:
        return None, None
    commit = getattr(build, "GIT_COMMIT", "") or None
    dirty = getattr(build, "GIT_DIRTY", None)
    return commit, (dirty if isinstance(dirty, bool) else None)


def version_line() -> str:
    """``tpcstudy 0.1.0 (commit 9db85c1)``, ``..., modified)`` or without the commit."""
    commit, dirty = source_commit()
    if not commit:
        return f"tpcstudy {__version__} (commit unknown)"
    return f"tpcstudy {__version__} (commit {commit[:12]}{', modified' if dirty else ''})"
