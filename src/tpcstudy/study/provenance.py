"""How a run was made: versions, commit, platform, and the study settings in ``meta.json``."""

from __future__ import annotations

import datetime as _dt
import json
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .._version import __version__, source_commit
from ..errors import InputFileError, UsageError
from ..io import atomic_write_text
from ..io.bounded import read_bounded_json
from .kinds import KINDS

__all__ = ["environment", "write_meta", "read_meta"]

_VERSIONED = ("numpy", "networkx", "highspy", "tqdm", "scipy", "ortools", "pulp")


def environment() -> Dict[str, Any]:
    """Versions, commit and platform of this process (without importing the LP packages)."""
    packages: Dict[str, Optional[str]] = {}
    for name in _VERSIONED:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    commit, dirty = source_commit()
    return {
        "python": platform.python_version(),
        "tpcstudy": __version__,
        "packages": packages,
        "git_commit": commit,
        "git_dirty": dirty,
        "platform": platform.platform(),
        "argv": list(sys.argv),
    }


def _normalise(obj: Any) -> Any:
    """JSON round trip (tuples become lists, keys strings) so stored and new configs compare."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def _rerun(kind: Optional[str]) -> str:
    """The command whose ``--overwrite`` starts a folder of this kind over."""
    return KINDS[kind].command if kind in KINDS else "the same command with"


def write_meta(out_dir: Union[str, Path], config: Mapping[str, Any], *,
               kind: Optional[str] = None, seeds: Optional[Sequence[int]] = None,
               solver: Optional[str] = None, overwrite: bool = False) -> Dict[str, Any]:
    """Record how a run was made in ``out_dir/meta.json`` (atomically).

    Parameters
    ----------
    out_dir
        The results folder (created if missing).
    config
        The study's settings (everything that changes its results), JSON-serialisable.
    kind
        The study (``"maxflow"``, ``"disjoint"``): :func:`~tpcstudy.study.store.load_results`
        reads it back to know what a folder holds.
    seeds, solver
        Stored beside ``config`` and compared like it.
    overwrite
        Replace a ``meta.json`` whose study settings differ instead of refusing.

    Returns
    -------
    dict
        The metadata written: ``study`` (kind, config, seeds, solver), ``started`` (first run),
        the environment of this run (``python``, ``tpcstudy``, ``packages``, ``git_commit``,
        ``git_dirty``, ``platform``, ``argv``) and ``runs``, one entry per invocation.

    Raises
    ------
    UsageError
        ``meta.json`` exists with different study settings (resuming would mix results of
        two studies) and ``overwrite`` is false.  The message names the differing keys.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "meta.json"
    study = _normalise({"kind": kind, "config": dict(config),
                        "seeds": None if seeds is None else list(seeds), "solver": solver})
    env = environment()
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    runs: List[Dict[str, Any]] = []
    started = now
    if path.exists() and not overwrite:
        try:
            old = read_bounded_json(path, 16 << 20, follow=False, what="meta.json")
            if not isinstance(old, dict):
                raise InputFileError("not a JSON object")
        except (OSError, ValueError) as exc:  # InputFileError (a link, a FIFO) is a ValueError
            raise InputFileError(f"{path}: unreadable ({exc}); use another output folder or "
                                 "remove it") from None
        recorded = dict(old.get("study") or {})
        if "kind" not in recorded:  # written before meta.json recorded the kind: same study
            recorded["kind"] = study["kind"]
        if recorded != study:
            a, b = recorded, study
            diff = sorted({f"config.{k}" for k in set(a.get("config") or {}) | set(b["config"])
                           if (a.get("config") or {}).get(k) != b["config"].get(k)}
                          | {k for k in ("kind", "seeds", "solver") if a.get(k) != b[k]})
            raise UsageError(f"{path} holds a different study (differs in: {', '.join(diff)}); "
                             f"use another output folder, or start over ({_rerun(study['kind'])} "
                             "--overwrite)")
        runs = list(old.get("runs") or [])
        started = old.get("started") or now
    runs.append({"started": now, **{k: env[k] for k in ("tpcstudy", "git_commit", "git_dirty")}})
    meta = {"study": study, "started": started, **env, "runs": runs}
    atomic_write_text(path, json.dumps(meta, indent=2, sort_keys=False) + "\n")
    return meta


def _unreadable(file: str, line: Optional[int], what: str) -> Exception:
    return InputFileError(f"{file}: unreadable meta.json ({what})")


def read_meta(folder: Union[str, Path]) -> Dict[str, Any]:
    """``folder/meta.json`` as a dict (``{}`` when there is none).

    Raises
    ------
    InputFileError
        The file exists but is not a meta.json (not JSON, or of another shape): exit 1.
    """
    path = Path(folder) / "meta.json"
    if not path.exists():
        return {}
    data = read_bounded_json(path, 16 << 20, follow=False, what="meta.json",
                             error=_unreadable)  # one line, whatever the file holds
    if not isinstance(data, dict):
        raise InputFileError(f"{path}: not a meta.json (a JSON object was expected)")
    study = data.get("study")
    if study is not None and not isinstance(study, dict):
        raise InputFileError(f"{path}: 'study' is not an object")
    for key, kind in (("config", dict), ("seeds", list)):
        if study and study.get(key) is not None and not isinstance(study[key], kind):
            raise InputFileError(f"{path}: study.{key} is not "
                                 f"{'an object' if kind is dict else 'a list'}")
    return dict(data)
