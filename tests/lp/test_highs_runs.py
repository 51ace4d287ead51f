"""How lp.highs runs HiGHS: on one thread (``_run``: the same pivots and optimum as on
HiGHS's default scheduler; a process whose scheduler another highspy user started with more
threads still solves, on that one) and reusing a finished model's ``Highs`` (``_reused_highs``:
emptied, its options back at HiGHS's defaults, so the next model solves as on a new Highs and
no option of the last one leaks)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import numpy as np

import tpcstudy.lp.highs as H
from tpcstudy.lp.highs import HighsModel


def _solve(options=None, seed=5, simplex="auto", m=30, n=25, per=4):
    rng = np.random.default_rng(seed)
    lp = HighsModel(options=options, simplex=simplex)
    lp.add_rows(rng.uniform(1.0, 5.0, m))
    starts, rows = [0], []
    for _ in range(n):
        rows.extend(sorted(rng.choice(m, per, replace=False).tolist()))
        starts.append(len(rows))
    lp.add_columns(np.ones(n), np.array(starts), np.array(rows), np.ones(len(rows)))
    res = lp.solve()
    return lp, res


def test_one_thread_pivots_as_the_default_scheduler() -> None:
    a = _solve(seed=3, m=40, n=30, per=5)[1]
    b = _solve({"threads": 0}, seed=3, m=40, n=30, per=5)[1]  # the caller's choice: HiGHS's
    assert a.ok and b.ok
    assert a.iterations == b.iterations and a.objective == b.objective
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.duals, b.duals)


def test_a_scheduler_started_elsewhere_with_more_threads() -> None:
    code = textwrap.dedent("""
        import numpy as np, highspy
        h = highspy.Highs(); h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 2)
        h.addRows(1, np.array([-highspy.kHighsInf]), np.array([1.0]), 0,
                  np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
        h.addCols(1, np.ones(1), np.zeros(1), np.array([1.0]), 1, np.array([0], dtype=np.int32),
                  np.array([0], dtype=np.int32), np.array([1.0]))
        assert h.run() == highspy.HighsStatus.kOk
        from tpcstudy.lp.highs import HighsModel
        lp = HighsModel()
        lp.add_rows(np.array([2.0]))
        lp.add_columns(np.ones(1), np.array([0, 1]), np.array([0]), np.array([1.0]))
        r = lp.solve()
        assert r.ok and r.objective == 2.0, r
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr


def _empty_pool() -> None:
    gc.collect()  # (models of earlier tests left for the collector)
    H._FREE.h = None


def test_the_next_model_reuses_the_last_ones_highs_and_solves_alike(monkeypatch) -> None:
    _empty_pool()
    lp, first = _solve()
    h = lp._h
    del lp
    gc.collect()
    assert H._FREE.h is h
    lp2, again = _solve()
    assert lp2._h is h and H._FREE.h is None
    assert again.iterations == first.iterations and again.objective == first.objective
    np.testing.assert_array_equal(again.x, first.x)
    np.testing.assert_array_equal(again.duals, first.duals)
    del lp2
    gc.collect()
    monkeypatch.setattr(H, "_reused_highs", H._new_highs)  # a new Highs every time
    fresh = _solve()[1]
    assert fresh.iterations == first.iterations
    np.testing.assert_array_equal(fresh.x, first.x)


def test_no_option_leaks_into_the_next_model() -> None:
    _empty_pool()
    lp, _ = _solve({"presolve": "off", "dual_feasibility_tolerance": 1e-5}, simplex="primal")
    h = lp._h
    del lp
    gc.collect()
    lp2, res = _solve()
    assert lp2._h is h and res.ok
    assert h.getOptionValue("presolve")[1] == "choose"
    assert h.getOptionValue("dual_feasibility_tolerance")[1] == 1e-7
    assert h.getOptionValue("simplex_strategy")[1] == 1  # this model's own (dual)
