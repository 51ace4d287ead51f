"""A backend in a child process, for a package that cannot be loaded beside one already
imported (``ortools`` next to ``highspy``, or the reverse)."""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from .base import LPModel, LPResult

__all__ = ["IsolatedModel"]

#: Makes a model in the child: ``build(solver, options)`` (module-level, so it pickles by name).
Builder = Callable[[str, Dict[str, Any]], LPModel]


def _serve(conn: Any, solver: str, options: Dict[str, Any], build: Builder) -> None:
    """Child-process loop of :class:`IsolatedModel`: apply each call to a local model."""
    try:
        model: Any = build(solver, options)
        conn.send((True, None))
    except BaseException as exc:  # report why the backend could not start
        conn.send((False, exc))
        return
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        name, args = msg
        try:
            conn.send((True, getattr(model, name)(*args)))
        except BaseException as exc:
            conn.send((False, exc))


class IsolatedModel:
    """An :class:`LPModel` whose backend lives in a child process (spawned, so clean).

    Used for a backend whose package cannot be loaded next to one already imported
    (``ortools`` next to ``highspy``).  Only the row/column increments cross the pipe, so
    the child keeps one live model and still warm starts.
    """

    def __init__(self, solver: str, options: Dict[str, Any], build: Builder) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.name = solver
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, solver, options, build), daemon=True,
                                 name=f"tpcstudy-lp-{solver}")
        self._proc.start()
        child.close()
        ok, err = self._conn.recv()
        if not ok:
            self.close()
            raise err
        self._rows = 0
        self._cols = 0

    @property
    def num_rows(self) -> int:
        return self._rows

    @property
    def num_cols(self) -> int:
        return self._cols

    def _call(self, name: str, *args: Any) -> Any:
        self._conn.send((name, args))
        ok, value = self._conn.recv()
        if not ok:
            raise value
        return value

    def add_rows(self, upper: np.ndarray) -> np.ndarray:
        ids = self._call("add_rows", np.asarray(upper))
        self._rows += len(ids)
        return ids

    def add_columns(self, obj: np.ndarray, starts: np.ndarray, rows: np.ndarray,
                    vals: np.ndarray, upper: Optional[np.ndarray] = None) -> np.ndarray:
        ids = self._call("add_columns", obj, starts, rows, vals, upper)
        self._cols += len(ids)
        return ids

    def solve(self, time_limit: Optional[float] = None) -> LPResult:
        t0 = time.perf_counter()
        try:
            return self._call("solve", time_limit)
        except Exception as exc:  # the child died (crash in the solver, killed, ...)
            return LPResult("error", float("nan"), np.full(self._cols, np.nan),
                            np.full(self._rows, np.nan), time.perf_counter() - t0,
                            f"isolated {self.name} process failed: {type(exc).__name__}: {exc}")

    def write(self, path: str) -> None:
        self._call("write", os.path.abspath(str(path)))

    def basis(self) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        got: Optional[Tuple[np.ndarray, np.ndarray]] = self._call("basis")
        return got

    def set_basis(self, cols: np.ndarray, rows: np.ndarray) -> bool:
        return bool(self._call("set_basis", np.asarray(cols), np.asarray(rows)))

    def close(self) -> None:
        """Stop the child process (also done when the model is garbage-collected)."""
        try:
            self._conn.send(None)
        except Exception:
            pass
        self._proc.join(timeout=2)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()

    def __del__(self) -> None:
        try:
            if self._proc.is_alive():
                self.close()
        except Exception:
            pass
