"""The checkout's root is where the README's install leaves a user: ``import tpcstudy`` there must
find the installed package (with its compiled core), not a source folder that shadows it."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_imports_from_the_checkout_root() -> None:
    # "-c" puts the working directory first on sys.path, exactly like a user's python prompt
    out = subprocess.run([sys.executable, "-c",
                          "import tpcstudy, tpcstudy._core as c; print(tpcstudy.__version__)"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == __import__("tpcstudy").__version__
    assert not (ROOT / "tpcstudy").exists(), "the package lives in src/ (a root folder shadows it)"


def _git(*argv: str) -> str:
    out = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        pytest.skip(f"not a git checkout ({out.stderr.strip()[:200]})")
    return out.stdout.strip()


def test_the_build_records_its_commit() -> None:
    """A non-editable install (the README's) has no checkout to ask: the build wrote the commit
    into the package, and --version and every meta.json carry it."""
    import tpcstudy._build as build
    from tpcstudy._version import _in_checkout, source_commit

    head = _git("rev-parse", "HEAD")
    assert re.fullmatch(r"[0-9a-f]{40}", build.GIT_COMMIT)
    assert build.GIT_DIRTY in (True, False)
    commit, _ = source_commit()
    if not _in_checkout():  # installed from this checkout just before the tests (CI)
        assert build.GIT_COMMIT == head
    assert commit == head
    out = subprocess.run([sys.executable, "-m", "tpcstudy", "--version"], capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert f"(commit {head[:12]}" in out.stdout


def test_an_installed_copy_never_asks_an_unrelated_repository(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv inside the user's own git repository: the commit must come from the build, never
    from ``git rev-parse`` in the user's repository."""
    from tpcstudy import _version

    repo = tmp_path / "users-project"
    (repo / "venv" / "lib").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    monkeypatch.setattr(_version, "_CHECKOUT", repo)
    assert not _version._in_checkout()
    commit, _ = _version.source_commit()
    import tpcstudy._build as build
    assert commit == (build.GIT_COMMIT or None)
