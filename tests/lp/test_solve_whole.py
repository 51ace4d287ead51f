"""lp.highs.solve_whole: one LP passed whole to HiGHS (the minimum-MLU arc LP's solver), on a
Highs object the thread keeps: each call starts from HiGHS's default options and an empty
model, whatever the call before it set or left."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tpcstudy.errors import UsageError
from tpcstudy.lp.highs import _whole_highs, solve_whole


def _lp():
    """min x0 + 2 x1  s.t.  x0 + x1 >= 3,  x0 <= 1 (as a row): optimum 1 + 2 * 2 = 5."""
    cost = np.array([1.0, 2.0])
    starts = np.array([0, 2, 3])
    index = np.array([0, 1, 0])
    value = np.array([1.0, 1.0, 1.0])
    return (cost, np.zeros(2), starts, index, value, np.array([3.0, -np.inf]),
            np.array([np.inf, 1.0]))


def test_hand_worked_optimum_and_duals():
    r = solve_whole(*_lp())
    assert r.status == "optimal" and r.objective == pytest.approx(5.0)
    np.testing.assert_allclose(r.x, [1.0, 2.0], atol=1e-9)
    # d objective / d bound: raising 3 costs 2 per unit; raising the cap on x0 saves 1
    np.testing.assert_allclose(r.duals, [2.0, -1.0], atol=1e-9)


def test_options_do_not_leak_into_the_next_call():
    import highspy

    solve_whole(*_lp(), options={"simplex_strategy": 4, "presolve": "off"})
    h = _whole_highs(highspy)
    assert h.getOptionValue("simplex_strategy")[1] == 1  # HiGHS's default again
    assert h.getOptionValue("presolve")[1] == "choose"
    assert h.getNumCol() == 0  # the last model was emptied
    with pytest.raises(UsageError, match="bad option"):
        solve_whole(*_lp(), options={"no_such_option": 1})
    r = solve_whole(*_lp())  # after a refused option: a clean solve
    assert r.status == "optimal" and r.objective == pytest.approx(5.0)


def test_each_thread_has_its_own():
    import highspy

    got = {}
    both = threading.Barrier(2)

    def run(i):
        h = _whole_highs(highspy)
        both.wait(timeout=10)  # both threads alive, each holding its own
        got[i] = (h, solve_whole(*_lp()).objective)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got[0][0] is not got[1][0] and got[0][1] == got[1][1] == pytest.approx(5.0)
