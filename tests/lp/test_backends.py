"""tpcstudy.lp (highs, ortools, pulp, isolated): every backend against hand-solved LPs and scipy's linprog.

``ortools`` and ``highspy`` cannot share a process, so each backend's battery runs in its own
child process (``python tests/lp/test_backends.py SOLVER`` prints JSON); the checks run here against
scipy.  The in-process tests use HiGHS only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from typing import Any, Dict, List

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
if TESTS not in sys.path:  # run as a script (the battery's child process): find helpers.py
    sys.path.insert(0, TESTS)

from helpers import cg_instance, column_generation  # noqa: E402

SOLVERS = ["highs", "glop", "pdlp", "pulp"]
# PDLP is first-order: objective within 1e-6 relative (tolerance 1e-10 gives ~1e-9), duals looser.
DUAL_TOL = {"highs": 1e-7, "glop": 1e-7, "pdlp": 1e-5, "pulp": 1e-6}


def _available(solver: str) -> bool:
    mod = {"highs": "highspy", "glop": "ortools", "pdlp": "ortools", "pulp": "pulp"}[solver]
    return find_spec(mod) is not None


# ------------------------------------------------------------------------ instances
def _instances() -> List[Dict[str, Any]]:
    """Deterministic LPs: (upper, obj, CSC columns, column uppers, batch sizes)."""
    out = []
    # Two paths sharing link 0 (capacity 1); path 0 also uses link 1 (cap 0.4), path 1 link 2.
    # Optimum 1 (link 0 full), unique duals y = (1, 0, 0).
    out.append(dict(name="shared_link", upper=[1.0, 0.4, 5.0], obj=[1.0, 1.0],
                    starts=[0, 2, 4], rows=[0, 1, 0, 2], vals=[1.0, 1.0, 1.0, 1.0],
                    col_upper=None, batches=[1, 1]))
    # Same with a demand row (row 3) bounding path 0 alone at 0.3 and a path bounded by u=0.2.
    out.append(dict(name="demand_rows", upper=[1.0, 0.4, 5.0, 0.3], obj=[1.0, 1.0, 2.0],
                    starts=[0, 3, 5, 6], rows=[0, 1, 3, 0, 2, 2], vals=[1.0] * 6,
                    col_upper=[np.inf, np.inf, 0.2], batches=[3]))
    rng = np.random.default_rng(12345)
    for k in range(6):
        m, n = int(rng.integers(5, 25)), int(rng.integers(5, 40))
        starts, rows, vals = [0], [], []
        for _ in range(n):
            r = np.sort(rng.choice(m, size=int(rng.integers(1, min(m, 6) + 1)), replace=False))
            rows += r.tolist()
            vals += (rng.integers(1, 3, size=r.size) if k % 2 else
                     rng.uniform(0.2, 3.0, size=r.size)).tolist()
            starts.append(len(rows))
        col_upper = np.where(rng.random(n) < 0.3, rng.uniform(0.1, 2.0, n), np.inf)
        sizes = [n // 3, n // 3, n - 2 * (n // 3)]
        out.append(dict(name=f"random{k}", upper=rng.uniform(1.0, 10.0, m).tolist(),
                        obj=(np.ones(n) if k % 2 else rng.uniform(0.5, 2.0, n)).tolist(),
                        starts=starts, rows=rows, vals=vals,
                        col_upper=None if k < 2 else col_upper.tolist(),
                        batches=[s for s in sizes if s]))
    return out


def _run_battery(solver: str) -> Dict[str, Any]:
    """Everything a backend must do; runs in a child process with only that backend loaded."""
    from tpcstudy import lp

    res: Dict[str, Any] = {"loaded": sorted(m for m in ("highspy", "ortools") if m in sys.modules)}
    for inst in _instances():
        model = lp.make_model(solver)
        model.add_rows(np.array(inst["upper"]))
        starts = np.array(inst["starts"])
        rows, vals = np.array(inst["rows"]), np.array(inst["vals"])
        cu = None if inst["col_upper"] is None else np.array(inst["col_upper"])
        first = 0
        for size in inst["batches"]:  # add columns in batches, re-solving in between
            s = starts[first:first + size + 1]
            ids = model.add_columns(np.array(inst["obj"][first:first + size]), s - s[0],
                                    rows[s[0]:s[-1]], vals[s[0]:s[-1]],
                                    None if cu is None else cu[first:first + size])
            assert ids.tolist() == list(range(first, first + size))
            r = model.solve()
            first += size
        res[inst["name"]] = dict(status=r.status, objective=r.objective, x=r.x.tolist(),
                                 duals=r.duals.tolist(), seconds=r.seconds)

    def failure(upper: list, obj: list, starts: list, rows: list, vals: list, **kw: Any) -> list:
        model = lp.make_model(solver)
        model.add_rows(np.array(upper, dtype=float))
        model.add_columns(np.array(obj, dtype=float), np.array(starts), np.array(rows, dtype=int),
                          np.array(vals, dtype=float))
        r = model.solve(**kw)
        return [r.status, r.message, len(r.x), len(r.duals)]

    res["infeasible"] = failure([-1.0, 2.0], [1.0], [0, 2], [0, 1], [1.0, 1.0])
    res["unbounded"] = failure([1.0], [1.0, 1.0], [0, 1, 1], [0], [1.0])
    empty = lp.make_model(solver)
    r = empty.solve()
    res["empty"] = [r.status, r.objective]
    empty.add_rows(np.array([1.0, 2.0]))
    r = empty.solve()
    res["rows_only"] = [r.status, r.objective, r.duals.tolist()]

    inst = cg_instance(30, pair_fraction=0.2, seed=3)
    res["cg"] = column_generation(inst, lp.make_model(solver))
    with tempfile.TemporaryDirectory() as tmp:
        model = lp.make_model(solver)
        model.add_rows(np.array([1.0, 0.4, 5.0]))
        model.add_columns(np.ones(2), np.array([0, 2, 4]), np.array([0, 1, 0, 2]), np.ones(4))
        sizes = {}
        for suffix in (".lp", ".mps"):
            path = os.path.join(tmp, "model" + suffix)
            model.write(path)
            sizes[suffix] = os.path.getsize(path)
        res["write"] = sizes
    res["loaded_after"] = sorted(m for m in ("highspy", "ortools") if m in sys.modules)
    return res


@pytest.fixture(scope="module")
def battery() -> Dict[str, Dict[str, Any]]:
    """Run every available backend's battery in its own process, in parallel."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    procs = {s: subprocess.Popen([sys.executable, os.path.abspath(__file__), s],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
             for s in SOLVERS if _available(s)}
    out = {}
    for s, p in procs.items():
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, f"{s} battery failed:\n{stderr[-3000:]}"
        out[s] = json.loads(stdout.strip().splitlines()[-1])
    return out


def _reference(inst: Dict[str, Any]) -> float:
    from scipy.optimize import linprog

    m, n = len(inst["upper"]), len(inst["obj"])
    a = np.zeros((m, n))
    for j in range(n):
        for e in range(inst["starts"][j], inst["starts"][j + 1]):
            a[inst["rows"][e], j] = inst["vals"][e]
    cu = inst["col_upper"] or [np.inf] * n
    r = linprog(-np.array(inst["obj"]), A_ub=a, b_ub=inst["upper"],
                bounds=[(0, None if not np.isfinite(u) else u) for u in cu], method="highs")
    assert r.status == 0
    return -r.fun


def _dense(inst: Dict[str, Any]) -> np.ndarray:
    m, n = len(inst["upper"]), len(inst["obj"])
    a = np.zeros((m, n))
    for j in range(n):
        for e in range(inst["starts"][j], inst["starts"][j + 1]):
            a[inst["rows"][e], j] = inst["vals"][e]
    return a


# ------------------------------------------------------------------------ backend tests
@pytest.mark.parametrize("solver", SOLVERS)
def test_backend_only_loads_its_package(battery, solver):
    if solver not in battery:
        pytest.skip(f"{solver} not installed")
    want = {"highs": ["highspy"], "glop": ["ortools"], "pdlp": ["ortools"], "pulp": []}[solver]
    assert battery[solver]["loaded_after"] == want


@pytest.mark.parametrize("solver", SOLVERS)
def test_hand_solved_shared_link(battery, solver):
    if solver not in battery:
        pytest.skip(f"{solver} not installed")
    r = battery[solver]["shared_link"]
    assert r["status"] == "optimal"
    assert r["objective"] == pytest.approx(1.0, rel=1e-6)
    x = np.array(r["x"])
    assert x.sum() == pytest.approx(1.0, rel=1e-6) and x[0] <= 0.4 + 1e-6
    assert np.allclose(r["duals"], [1.0, 0.0, 0.0], atol=DUAL_TOL[solver] * 10)
    # demand row 3 caps path 0 at 0.3; path 2 (obj 2, u=0.2) rides link 2 only: 1 + 0.4 = 1.4
    d = battery[solver]["demand_rows"]
    assert d["status"] == "optimal" and d["objective"] == pytest.approx(1.4, rel=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_random_lps_match_linprog_and_duals_certify(battery, solver):
    if solver not in battery:
        pytest.skip(f"{solver} not installed")
    tol = DUAL_TOL[solver]
    for inst in _instances():
        r = battery[solver][inst["name"]]
        ref = _reference(inst)
        assert r["status"] == "optimal", (inst["name"], r)
        assert r["objective"] == pytest.approx(ref, rel=1e-6), inst["name"]
        a, b = _dense(inst), np.array(inst["upper"])
        c = np.array(inst["obj"])
        cu = np.array(inst["col_upper"] or [np.inf] * len(c))
        x, y = np.array(r["x"]), np.array(r["duals"])
        scale = 1.0 + np.abs(c).max()
        # primal feasibility and objective
        assert (a @ x <= b + tol * scale * 10).all() and (x >= -tol).all() and (x <= cu + tol).all()
        assert c @ x == pytest.approx(r["objective"], rel=1e-6)
        # dual feasibility: y >= 0 and no improving column unless it sits at its upper bound
        assert (y >= -tol * scale).all(), inst["name"]
        red = c - a.T @ y
        assert (red[~np.isfinite(cu)] <= tol * scale * 10).all(), (inst["name"], red.max())
        # complementary slackness
        assert np.abs(y * (b - a @ x)).max() <= tol * scale * 100, inst["name"]
        # strong duality: sum upper*y (+ bound duals of capped columns) == objective
        dual_obj = b @ y + np.sum(np.where(np.isfinite(cu), cu, 0.0) * np.maximum(red, 0.0))
        assert dual_obj == pytest.approx(ref, rel=1e-6), inst["name"]
        if not np.isfinite(cu).any():
            assert b @ y == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_failures_are_statuses(battery, solver):
    if solver not in battery:
        pytest.skip(f"{solver} not installed")
    res = battery[solver]
    status, message, nx, ny = res["infeasible"]
    assert status == "infeasible" and (nx, ny) == (1, 2) and message
    # PDLP cannot always tell unbounded from infeasible / failed
    ok = {"unbounded"} if solver != "pdlp" else {"unbounded", "infeasible", "error"}
    assert res["unbounded"][0] in ok
    assert res["empty"] == ["optimal", 0.0]
    assert res["rows_only"] == ["optimal", 0.0, [0.0, 0.0]]


@pytest.mark.parametrize("solver", SOLVERS)
def test_write_formats(battery, solver):
    if solver not in battery:
        pytest.skip(f"{solver} not installed")
    assert all(size > 0 for size in battery[solver]["write"].values())


def test_all_backends_agree_on_column_generation(battery):
    objs = {s: r["cg"]["objective"] for s, r in battery.items()}
    assert all(r["cg"]["status"] == "optimal" for r in battery.values())
    ref = objs["highs"]
    for v in objs.values():
        assert v == pytest.approx(ref, rel=1e-6), objs


# ------------------------------------------------------------------------ in-process (HiGHS)
def test_import_loads_no_backend():
    code = ("import sys, tpcstudy.lp; "
            "print(sorted(m for m in ('highspy','ortools','pulp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_input_is_usage_error():
    from tpcstudy import lp
    from tpcstudy.errors import UsageError

    with pytest.raises(UsageError, match="unknown LP solver"):
        lp.make_model("cplex")
    m = lp.make_model("highs")
    m.add_rows(np.array([1.0, 1.0]))
    with pytest.raises(UsageError, match="out of range"):
        m.add_columns(np.ones(1), np.array([0, 1]), np.array([5]), np.ones(1))
    with pytest.raises(UsageError, match="same row twice"):
        m.add_columns(np.ones(1), np.array([0, 2]), np.array([1, 1]), np.ones(2))
    with pytest.raises(UsageError, match="same row twice"):  # not rising: found by sorting
        m.add_columns(np.ones(2), np.array([0, 1, 4]), np.array([0, 1, 0, 1]), np.ones(4))
    # rows falling within a column, or again in the next column, are no repeat
    m2 = lp.make_model("highs")
    m2.add_rows(np.array([1.0, 1.0]))
    assert m2.add_columns(np.ones(3), np.array([0, 2, 2, 4]), np.array([1, 0, 0, 1]),
                          np.ones(4)).tolist() == [0, 1, 2]
    with pytest.raises(UsageError, match="starts"):
        m.add_columns(np.ones(2), np.array([0, 1, 2, 3]), np.array([0, 1]), np.ones(2))
    with pytest.raises(UsageError, match=r"\.lp or \.mps"):
        m.write("model.txt")
    with pytest.raises(UsageError, match="simplex"):
        lp.make_model("highs", simplex="barrier")
    # HiGHS-style starts (no trailing end) are accepted
    assert m.add_columns(np.ones(2), np.array([0, 1]), np.array([0, 1]), np.ones(2)).tolist() == [0, 1]
    assert m.solve().objective == pytest.approx(2.0)


def test_solver_exception_becomes_error_status(monkeypatch):
    from tpcstudy import lp

    m = lp.make_model("highs")
    m.add_rows(np.array([1.0]))
    m.add_columns(np.ones(1), np.array([0, 1]), np.array([0]), np.ones(1))

    def boom() -> None:
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(m._h, "run", boom)
    r = m.solve()
    assert r.status == "error" and "solver exploded" in r.message
    assert np.isnan(r.objective) and r.x.shape == (1,) and r.duals.shape == (1,)


def test_highs_time_limit_status():
    from tpcstudy import lp

    inst = cg_instance(80, pair_fraction=0.3, seed=1)
    m = lp.make_model("highs", options={"presolve": "off"})
    m.add_rows(inst.arc_cap)
    cols = [inst.path_arcs(s, t) for s, t in inst.pairs]
    starts = np.concatenate([[0], np.cumsum([c.size for c in cols])])
    m.add_columns(np.ones(len(cols)), starts, np.concatenate(cols), np.ones(starts[-1]))
    r = m.solve(time_limit=1e-6)
    assert r.status == "time_limit", r
    assert m.solve().status == "optimal"  # the model is still usable


def test_primal_and_dual_simplex_agree_warm_started():
    from tpcstudy import lp

    inst = cg_instance(40, pair_fraction=0.2, seed=7)
    a = column_generation(inst, lp.make_model("highs", simplex="primal"))
    b = column_generation(inst, lp.make_model("highs", simplex="dual"))
    assert a["objective"] == pytest.approx(b["objective"], rel=1e-9)
    assert a["rounds"] >= 1


@pytest.mark.skipif(not _available("glop"), reason="ortools not installed")
def test_ortools_isolated_when_highspy_loaded():
    import highspy  # noqa: F401  (the conflicting package is now loaded here)

    from tpcstudy import lp

    m = lp.make_model("glop")
    assert type(m).__name__ == "IsolatedModel"
    m.add_rows(np.array([1.0, 0.4, 5.0]))
    assert m.add_columns(np.ones(2), np.array([0, 2, 4]), np.array([0, 1, 0, 2]),
                         np.ones(4)).tolist() == [0, 1]
    r = m.solve()
    assert r.status == "optimal" and r.objective == pytest.approx(1.0)
    assert (m.num_rows, m.num_cols) == (3, 2)
    from tpcstudy.errors import UsageError

    with pytest.raises(UsageError, match="out of range"):  # errors cross the process boundary
        m.add_columns(np.ones(1), np.array([0, 1]), np.array([9]), np.ones(1))
    m.close()
    assert m.solve().status == "error"  # a dead child is a status, not a crash


if __name__ == "__main__":  # child process of the `battery` fixture (imports the installed package)
    print(json.dumps(_run_battery(sys.argv[1])))


def test_highs_banner_is_silenced():
    """HiGHS prints its banner when the first model of a process is made, before any option
    can silence it: silenced at the source, so neither tables and --json on standard output nor
    a notebook cell (which shows standard error) carry it."""
    code = ("from tpcstudy.lp.highs import HighsModel; HighsModel(); HighsModel(); "
            "print('ok')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "ok\n"
    assert "Running HiGHS" not in p.stderr
