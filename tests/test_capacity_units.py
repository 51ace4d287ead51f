"""No capacity unit changes a result: the max-flow LPs count capacity in the topology's median
capacity, so Geant2012 with the same random capacities in 1e-9, 1, 1e6 or 1e14 units gives the
same value per unit for every model, demands included (before, 1e-9 units gave ecmp 1.9x too
high and 1e14 'unbounded', every row 'ok')."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tpcstudy import heavy_pairs, max_flow, prune, read_topology
from tpcstudy.models.maxflow import capacity_scale


@pytest.fixture(scope="module")
def geant(zoo_installed):
    t = prune(read_topology("zoo/Geant2012"))
    t.arc_capacity = np.repeat(np.random.default_rng(3).uniform(1, 10, t.num_links), 2)
    return t, heavy_pairs(t, percent=10, seed=0)


def _scaled(t, s):
    t2 = copy.copy(t)
    t2.arc_capacity = t.arc_capacity * s
    return t2


@pytest.mark.parametrize("model", ["ecmp", "multipath", "sr", "mcf"])
def test_same_value_per_unit(geant, model):
    t, pairs = geant
    ref = max_flow(t, pairs, model=model)
    assert ref.ok
    for s in (1e-9, 1e6, 1e14):
        r = max_flow(_scaled(t, s), pairs, model=model)
        assert r.ok, (s, r.status)
        assert r.value / s == pytest.approx(ref.value, rel=1e-6), s
        assert np.allclose(r.pair_flow / s, ref.pair_flow, rtol=1e-6, atol=1e-9 * ref.value)


def test_demands_scale_with_the_capacities(geant):
    t, pairs = geant
    d = np.full(len(pairs), 0.5)
    ref = max_flow(t, pairs, model="sr", demands=d)
    for s in (1e-9, 1e9):
        r = max_flow(_scaled(t, s), pairs, model="sr", demands=d * s)
        assert r.value / s == pytest.approx(ref.value, rel=1e-6)
        assert np.all(r.pair_flow <= d * s * (1 + 1e-6))


def test_the_lp_unit_is_the_median_capacity():
    class T:
        arc_capacity = np.array([1.0, 3.0, 1e-9, np.inf, 0.0, 100.0])

    assert capacity_scale(T()) == 2.0  # the median of 1e-9, 1, 3 and 100 (0 and inf left out)
    T.arc_capacity = np.array([0.0, np.nan])
    assert capacity_scale(T()) == 1.0


@pytest.mark.parametrize("model", ["multipath", "mcf"])
def test_a_proof_by_the_lower_model_at_every_unit(geant, model):
    """mcf and multipath proven by the sr / ecmp optimum (no LP: models.maxflow_models.
    proven_by) at capacities in 1e-9 and 1e9 units: the same value per unit as their own LP,
    proven at every unit or at none (the certificate's tolerances are relative)."""
    t, pairs = geant
    lower_model = "sr" if model == "mcf" else "ecmp"
    cold = max_flow(t, pairs, model=model)
    proven = []
    for s in (1e-9, 1.0, 1e9):
        ts = _scaled(t, s)
        lower = max_flow(ts, pairs, model=lower_model, k=4)
        r = max_flow(ts, pairs, model=model,
                     **({"sr_solution": lower} if model == "mcf" else {"ecmp_solution": lower}))
        assert r.ok and r.value / s == pytest.approx(cold.value, rel=1e-9), s
        proven.append(r.iterations == 0)
    assert len(set(proven)) == 1, proven
