"""A finished HighsModel's Highs is reused by the next model of its thread (lp.highs.
_reused_highs): emptied, its options back at HiGHS's defaults, so the next model solves as on
a new Highs (the same pivots, duals and optimum) and no option of the last one leaks."""

from __future__ import annotations

import gc

import numpy as np

import tpcstudy.lp.highs as H
from tpcstudy.lp.highs import HighsModel


def _solve(options=None, seed=5, simplex="auto"):
    rng = np.random.default_rng(seed)
    m, n = 30, 25
    lp = HighsModel(options=options, simplex=simplex)
    lp.add_rows(rng.uniform(1.0, 5.0, m))
    starts, rows = [0], []
    for _ in range(n):
        rows.extend(sorted(rng.choice(m, 4, replace=False).tolist()))
        starts.append(len(rows))
    lp.add_columns(np.ones(n), np.array(starts), np.array(rows), np.ones(len(rows)))
    res = lp.solve()
    return lp, res


def _empty_pool() -> None:
    gc.collect()  # (models of earlier tests left for the collector)
    H._FREE.highs = []


def test_the_next_model_reuses_the_last_ones_highs_and_solves_alike(monkeypatch) -> None:
    _empty_pool()
    lp, first = _solve()
    h = lp._h
    del lp
    gc.collect()
    assert H._FREE.highs == [h]
    lp2, again = _solve()
    assert lp2._h is h and H._FREE.highs == []
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
