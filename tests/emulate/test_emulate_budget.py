"""The CPU budget on the real emulator (root): the calibration measures a real chain (its packet
rate is what the link rate and the hops make it), ``--link-mbps auto`` chooses and records its
settings, and a CPU-bound first attempt is measured again at half the rate, also when a resumed
folder holds it."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from tpcstudy.emulate.experiments import budget as B
from tpcstudy.emulate.experiments import harness
from tpcstudy.emulate.experiments.calibrate import ROUTERS, calibrate, measure_grid
from tpcstudy.emulate.experiments.harness import NetworkSettings, run_experiment
from tpcstudy.emulate.experiments.throughput import SATURATED, Throughput, ThroughputSettings
from tpcstudy.errors import EmulationError

pytestmark = pytest.mark.usefixtures("emulator", "emulation_guard")


#: The machine must be less busy than this before a real calibration: it measures the whole
#: machine's CPU (/proc/stat), so other work counts as forwarding cost.
IDLE_ENOUGH = 0.35


def test_calibration_counts_what_the_chain_forwards():
    """TCP fills a chain of 4 links at 5, 10 and 20 Mbit/s: every data frame (1514 bytes) is
    sent by the source's host NIC and by 4 link veths, 5 x rate / frame packets per second (TCP
    fills 90 to 100 % of a link), and its ACKs come back over as many veths, one per one or two
    segments: the veths send 1.2 to 2.1 times the data packets. The packet counts hold on any
    machine; the fitted cost needs a quiet one: measured up to 3 times, each after the machine
    calms down, its fit checked (:func:`fit` refuses an implausible cost or a point off the
    line); a machine that stays busy with other work skips with its busy share, never fails
    (the fit's logic is tested on synthetic readings in test_budget.py)."""
    notes = []
    for _attempt in range(3):
        waited, busy = B.wait_quiet(IDLE_ENOUGH, timeout=30.0)
        if busy >= IDLE_ENOUGH:
            notes.append(f"{busy:.0%} busy before the measurement (waited {waited:.0f} s)")
            continue
        try:
            cal = calibrate(rates=(5.0, 10.0, 20.0), warmup=1.0, seconds=2.0,
                            log=lambda m: None, scale=False)
        except EmulationError as exc:  # the fit refused: other work moved the busy share
            assert str(exc).startswith("calibration: "), exc
            notes.append(str(exc))
            continue
        assert [p[0] for p in cal.points][:2] == [5.0, 10.0]
        for rate, pps, busy in cal.points:
            data = ROUTERS * rate * 1e6 / (8 * 1514)
            assert 0.9 * 1.2 * data < pps < 2.1 * data, (rate, pps, data)
            assert 0 < busy <= 1
        assert 1e3 < cal.packets_per_core < 1e7  # fit() guarantees it, here on real points
        return
    pytest.skip("the machine stayed busy with other work, so no calibration could be told "
                "from it: " + "; ".join(notes))


def test_the_grid_measures_data_and_all_packets():
    """A 5 x 5 grid: 25 routers, every left-column router sending right; the data packets come
    from the goodput and the hop counts, all packets from the counters."""
    routers, every, data, busy = measure_grid(side=5, rate=2.0, warmup=1.0, seconds=2.0,
                                              log=lambda m: None)
    assert routers == 25 and 0 < busy <= 1  # 1 on a machine busy with other work
    assert 1.2 * data < every < 2.2 * data, (every, data)


def _rows(out: Path):
    with open(out / "results.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_auto_settings_and_the_cpu_bound_retry(zoo_installed, tmp_path, monkeypatch):
    """Abilene 20 %: the tests' calibration (50,000 packets/s per CPU) leaves room for the top
    auto rate, 10 Mbit/s. With the CPU limit forced below any reading every first attempt is
    CPU-bound: kept as such without the retry, then, resumed, measured again at the rate its
    busy share says fits (at most 0.8 of the first: 8 Mbit/s)."""
    st = ThroughputSettings(models=("ecmp", "sr"), warmup=1.0, seconds=2.0)
    out = tmp_path / "auto"
    monkeypatch.setattr(harness, "CPU_LIMIT", -1.0)

    def run(retry: bool):
        exp = Throughput(topo="zoo/Abilene", heavy=[20.0], seeds=[0], settings=st)
        return run_experiment(exp, out=str(out), log=lambda m: None,
                              network=NetworkSettings(auto=True, cpu_retry=retry))

    first = run(False)
    assert {r["model"] for r in first.rows} == {"ecmp", "sr"}
    for r in first.rows:
        assert r["status"] == "ok" and r["link_mbps"] == "10.0" and r["attempt"] == "1", r
        assert "the highest auto rate" in r["settings"] and 0 < float(r["predicted_cpu"]) < 0.6
    busy = max(float(r["cpu_busy"]) for r in first.rows)
    again = run(True)
    for r in again.rows:
        assert r["status"] == "ok" and r["attempt"] == "2", r
        assert r["settings"].startswith("CPU-bound at 10 Mbit/s (")
        assert float(r["link_mbps"]) == _retry_rate(busy), (busy, r)
        if float(r["cpu_busy"]) < B.CPU_LIMIT:  # TCP fills the links when it has the CPU
            assert float(r["ratio"]) / float(r["ceiling"]) > 0.8, r
    assert _rows(out) == [{k: str(v) for k, v in r.items()} for r in again.rows]
    # without a results folder too (its rows once never matched a task: no retry)
    exp = Throughput(topo="zoo/Abilene", heavy=[20.0], seeds=[0], settings=st)
    bare = run_experiment(exp, log=lambda m: None, network=NetworkSettings(auto=True))
    assert sorted((r["model"], r["attempt"]) for r in bare.rows) == [("ecmp", 2), ("sr", 2)]
    for r in bare.rows:  # its first attempt's reading, as the settings quote it (2 digits)
        m = re.search(r"busy there: x 0.6 / ([0-9.]+)\)", r["settings"])
        quoted = [float(m.group(1)) + d for d in (-0.005, 0.005)] if m else [1.0]
        assert float(r["link_mbps"]) in {_retry_rate(b) for b in quoted}, r


def _retry_rate(busy: float) -> float:
    """The retry's rate after a first attempt at 10 Mbit/s that made the CPUs ``busy``:
    10 x 0.6 / busy, at most 8 = 0.8 x 10 (an idle machine: 8), or 5 when they were saturated.
    Other work on the machine sets the busy share: the test derives the rate from the reading
    instead of assuming an idle machine."""
    if busy >= SATURATED:
        return B.nice_floor(5.0)
    return B.nice_floor(min(10.0 * 0.6 / busy, 8.0))
