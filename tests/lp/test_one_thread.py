"""HiGHS on one thread (lp.highs._run): the same pivots and optimum as on HiGHS's default
scheduler, and a process whose HiGHS scheduler another highspy user started with more threads
still solves (HiGHS refuses a second thread count: the run falls back to the one it has)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from tpcstudy.lp.highs import HighsModel


def _lp(options=None):
    rng = np.random.default_rng(3)
    m, n = 40, 30
    lp = HighsModel(options=options)
    lp.add_rows(rng.uniform(1.0, 5.0, m))
    starts, rows = [0], []
    for _ in range(n):
        rows.extend(sorted(rng.choice(m, 5, replace=False).tolist()))
        starts.append(len(rows))
    lp.add_columns(np.ones(n), np.array(starts), np.array(rows), np.ones(len(rows)))
    return lp


def test_one_thread_pivots_as_the_default_scheduler() -> None:
    a = _lp().solve()
    b = _lp({"threads": 0}).solve()  # the caller's choice is kept: HiGHS's own default
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
