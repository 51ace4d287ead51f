"""Two-path scenarios for the host policies: the BA paper's multihoming and the TPC paper's
changing delay (congestion as the source of delay: this project's kernels have no netem).

The network (:func:`~tpcstudy.emulate.network.handmade.two_sites`): site router ``A`` reaches
site router ``B`` over two equal-cost paths ``A - P1 - B`` (slot 0 of the table) and ``A - P2 -
B`` (slot 1), each link of capacity 1 (``--link-mbps``); a background host ``G`` sits behind
``A`` on a link of capacity 4 (never the bottleneck), its traffic pinned by SRH to one path at a
time. The policies choose between the two paths for ``A``'s transfers only (``ecmp``: no SRH,
the routers hash).

- **multihoming** ("Bandwidth Aggregation over Multihoming Links", Sterca, Bufnea, Niculescu,
  scaled down): ``flows`` long-lived site flows start in the first second, each placed by the
  policy (the BA policies may move them later); from a third to two thirds of the run a burst of
  ``background`` flows loads path 1. Per policy, over the measured window, the paper's metrics of
  the site flows' throughput: MMR (min / max), STD and AVGT (Mbit/s), the share of site flows on
  the loaded path during the burst (``burst_share``), and the flows per path each second
  (``counts``).
- **delay** (the TPC paper's Figure 13 setup): ``background`` long flows load one path for a
  ``phase`` of seconds, then the other, alternately; site requests of ``request_kb`` arrive as a
  Poisson process of ``rate`` per second. Per policy: completion times (median, p90, p99 and every
  value in ``fcts`` for the CDF) and ``on_idle``, the share of requests started on the path
  without background at that moment (``exp3`` should learn it; Gamma trades learning for
  exploration).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import UsageError
from ...export.layout import srh_bytes
from ...metrics import multihoming_metrics, quantile_inf
from ...policies import make_policy, parse_policy
from ...study.store import cell_float
from ...study.tasks import Task
from ..agent.client import TrafficResult, Transfer, queue_watch, run_traffic
from ..agent.protocol import PolicySpec
from ..network.handmade import two_sites
from ..network.lifecycle import Emulation
from .harness import Experiment, Log, Row, Unit
from .policies import COLUMNS, KEY, KIND
from .repeats import SHARE, Metric, draw_seed

__all__ = ["TwoPathSettings", "multihoming_arrivals", "delay_arrivals", "TwoPaths",
           "measure_two_paths", "counts_over_time", "format_two_paths", "SCENARIOS"]

SCENARIOS = ("multihoming", "delay")
#: Per scenario, what is summarised over draws and compared by draw (FCTs as medians: an
#: unfinished request's infinite time counts as the longest).
METRICS = {
    "multihoming": (Metric("mmr", label="MMR", bounds=SHARE), Metric("std_mbps", label="STD Mbit/s"),
                    Metric("avgt_mbps", label="AVGT Mbit/s"),
                    Metric("burst_share", label="on loaded path", digits=2, bounds=SHARE)),
    "delay": (Metric("fct_median", "median", label="FCT median"),
              Metric("fct_p99", "median", label="FCT p99"),
              Metric("on_idle", label="on idle path", digits=2, bounds=SHARE)),
}


@dataclasses.dataclass
class TwoPathSettings:
    scenario: str = "multihoming"
    policies: Sequence[str] = ("ecmp", "random", "exp3:0.1", "ba-rtt", "ba-throughput",
                               "queue-max", "queue-sum")
    flows: int = 16
    background: int = 16
    seconds: float = 30.0
    warmup: float = 2.0
    phase: float = 10.0
    rate: float = 10.0
    request_kb: float = 100.0
    poll_ms: float = 50.0

    def check(self) -> None:
        if self.scenario not in SCENARIOS:
            raise UsageError(f"scenario {self.scenario!r}: choose from {', '.join(SCENARIOS)}")
        for p in self.policies:
            name, _ = parse_policy(p)
            if name == "lp":
                raise UsageError(f"policy {p!r} does not run in the two-path scenarios (no LP "
                                 "here: the two paths are equal)")
        if not 1 <= self.flows <= 256 or not 0 <= self.background <= 256:
            raise UsageError("--flows must be 1..256 and --background 0..256")
        if not (self.seconds > 0 and self.warmup >= 0 and self.phase > 0 and self.rate > 0
                and self.request_kb > 0):
            raise UsageError("--seconds, --phase, --rate and --request-kb must be > 0")


def multihoming_arrivals(st: TwoPathSettings) -> Tuple[List[Transfer], float, float]:
    """Site flows (ids 1..flows) in the first second, then the burst pinned to path 1 (slot 0);
    returns the arrivals and the burst's start and end (s after the start)."""
    total = st.warmup + st.seconds
    b0, b1 = st.warmup + st.seconds / 3.0, st.warmup + 2.0 * st.seconds / 3.0
    out = [Transfer(i + 1, "A", "B", at=round(i / max(1, st.flows), 6))
           for i in range(st.flows)]
    out += [Transfer(st.flows + j + 1, "G", "B", at=round(b0 + j * 0.01, 6), slot=0, until=b1)
            for j in range(st.background)]
    assert b1 < total
    return sorted(out, key=lambda a: (a.at, a.id)), b0, b1


def delay_arrivals(st: TwoPathSettings, seed: int
                   ) -> Tuple[List[Transfer], List[Tuple[float, int]]]:
    """Requests (Poisson, seeded) and the background of each phase (pinned to path
    ``phase index % 2``, cut at the phase's end); returns them and ``[(phase start, loaded slot)]``."""
    total = st.warmup + st.seconds
    rng = np.random.default_rng(seed)
    size = int(round(st.request_kb * 1000))
    out: List[Transfer] = []
    t, nid = 0.0, 1
    while True:
        t += float(rng.exponential(1.0 / st.rate))
        if t >= total:
            break
        out.append(Transfer(nid, "A", "B", at=round(t, 6), size=size))
        nid += 1
    phases = []
    start, k = 0.0, 0
    while start < total:
        end = min(total, start + st.phase)
        phases.append((start, k % 2))
        out += [Transfer(nid + j, "G", "B", at=round(start + j * 0.01, 6), slot=k % 2, until=end)
                for j in range(st.background)]
        nid += st.background
        start, k = end, k + 1
    return sorted(out, key=lambda a: (a.at, a.id)), phases


def counts_over_time(res: TrafficResult, ids: Sequence[int], t0: float, times: Sequence[float],
                     paths: int = 2) -> List[List[int]]:
    """Site flows on each slot at each of ``times`` (s after ``t0``), from the agent's path
    logs (a flow counts from its first path until it ends)."""
    out = []
    for t in times:
        at = t0 + t
        n = [0] * paths
        for i in ids:
            r = res.transfers[i].sent if i in res.transfers else None
            if r is None:
                continue
            log = r.paths
            end = r.done or r.cut
            if not log or log[0][0] > at or (end is not None and end <= at):
                continue
            slot = [s for ts, s in log if ts <= at][-1]
            if slot is not None and 0 <= slot < paths:
                n[slot] += 1
        out.append(n)
    return out


def measure_two_paths(emu: Emulation, st: TwoPathSettings, *, seed: int, base: Dict[str, Any],
                      log: Optional[Callable[[str], None]] = None) -> List[Dict[str, Any]]:
    """One row per policy (module docstring); every policy sees the same arrivals."""
    st.check()
    log = log or (lambda m: None)
    spec = emu.spec
    plan = spec.plan
    slots = [srh_bytes([plan.loopback("P1"), plan.loopback("B")]),
             srh_bytes([plan.loopback("P2"), plan.loopback("B")])]
    tables = {"A": {"B": slots}, "G": {"B": slots}}
    routes = {"A": {"B": [["A", "P1", "B"], ["A", "P2", "B"]]},
              "G": {"B": [["G", "A", "P1", "B"], ["G", "A", "P2", "B"]]}}
    queues = (queue_watch(spec, routes) if any(p.startswith("queue-") for p in st.policies)
              else None)
    if st.scenario == "multihoming":
        arrivals, b0, b1 = multihoming_arrivals(st)
        phases: List[Tuple[float, int]] = []
    else:
        arrivals, phases = delay_arrivals(st, seed)
        b0 = b1 = math.nan
    site = [a for a in arrivals if a.source == "A"]
    unit = spec.link_mbps * 1e6
    rows = []
    for pol in dict.fromkeys(st.policies):
        make_policy(pol, {"B": 2}, seed=seed)  # errors here, not in the agent
        pols = {src: PolicySpec(pol, {"B": 2}, seed) for src in ("A", "G")}
        log(f"{st.scenario}: {pol}: {len(site)} site transfers; running {st.warmup:g} + "
            f"{st.seconds:g} s")
        res = run_traffic(emu, arrivals, warmup=st.warmup, seconds=st.seconds,
                          drain=0.0 if st.scenario == "multihoming" else 3.0, tables=tables,
                          policies=pols, queues=queues, poll_ms=st.poll_ms)
        t0 = res.times["connect"]
        secs = res.seconds
        row: Dict[str, Any] = dict(base, policy=pol, pairs=1, paths=2, flows=len(site),
                                   link_mbps=spec.link_mbps, warmup=st.warmup,
                                   seconds=st.seconds, cpu_busy=round(res.cpu_busy, 4))
        errors = sum(1 for a in site if res.transfers[a.id].error)
        moves = sum(max(0, len(res.transfers[a.id].paths) - 1) for a in site)
        if st.scenario == "multihoming":
            tput = [8.0 * res.transfers[a.id].window_bytes / secs / 1e6 for a in site]
            every = [float(s) for s in range(int(st.warmup + st.seconds) + 1)]
            counts = counts_over_time(res, [a.id for a in site], t0, every)
            inside = [c for s, c in zip(every, counts) if b0 + 1 <= s < b1]
            burst = (float(np.mean([c[0] / max(1, sum(c)) for c in inside])) if inside
                     else math.nan)
            mh = multihoming_metrics(tput)
            row.update(mmr=round(mh["mmr"], 4), std_mbps=round(mh["std"], 4),
                       avgt_mbps=round(mh["avgt"], 4),
                       goodput=round(sum(tput) * 1e6 / unit, 6), burst_share=round(burst, 4),
                       counts=" ".join(f"{int(s)}:{c[0]}/{c[1]}" for s, c in zip(every, counts)))
            log(f"{st.scenario}: {pol}: MMR {row['mmr']:.3f}, STD {row['std_mbps']:.3f}, AVGT "
                f"{row['avgt_mbps']:.3f} Mbit/s; on the loaded path during the burst "
                f"{burst:.0%}")
        else:
            win = [a for a in site if st.warmup <= a.at < st.warmup + st.seconds]
            fcts, idle = [], []
            for a in win:
                r = res.transfers[a.id]
                done = r.sent.done if r.sent else None
                fcts.append(float(done) - (t0 + a.at) if done is not None else math.inf)
                first = (r.paths or [(0.0, None)])[0][1]
                loaded = [sl for ps, sl in phases if ps <= a.at][-1]
                if first is not None:
                    idle.append(1.0 if first != loaded else 0.0)
            xs = sorted(fcts)
            row.update(transfers=len(win), completed=sum(1 for f in fcts if math.isfinite(f)),
                       fct_median=round(quantile_inf(xs, 0.5), 6),
                       fct_p90=round(quantile_inf(xs, 0.9), 6),
                       fct_p99=round(quantile_inf(xs, 0.99), 6),
                       on_idle=round(float(np.mean(idle)), 4) if idle else math.nan,
                       fcts=" ".join("inf" if math.isinf(f) else f"{f:.4f}" for f in fcts))
            log(f"{st.scenario}: {pol}: FCT median {row['fct_median']:.3f} s, p99 "
                f"{row['fct_p99']:.3f} s; on the idle path {row['on_idle']}")
        row.update(moves=moves, status="ok" if not errors else "failed",
                   error=f"{errors} transfers failed" if errors else "")
        rows.append(row)
    return rows


class TwoPaths(Experiment):
    """The two-path policy scenarios (module docstring): one task per seed running every
    policy on the same arrivals, on one network."""

    kind = KIND
    columns = COLUMNS
    key = KEY
    figure = "plot_policies"
    arm = "policy"

    def __init__(self, settings: TwoPathSettings, seeds: Sequence[int] = (0,)) -> None:
        settings.check()
        self.settings, self.seed_list = settings, [int(s) for s in seeds]
        self.metrics = METRICS[settings.scenario]
        self.arms = list(dict.fromkeys(settings.policies))

    def config(self) -> Dict[str, Any]:
        return {"scenario": self.settings.scenario,
                "policies": dict(dataclasses.asdict(self.settings)),
                "network_shape": "two sites A, B over paths A-P1-B (slot 0) and A-P2-B (slot "
                                 "1); background host G behind A, pinned by SRH"}

    def seeds(self) -> Optional[List[int]]:
        return self.seed_list

    def units(self, log: Log) -> Iterator[Unit]:
        sc = two_sites()
        yield Unit(self.settings.scenario, sc.topology, sc.plan,
                   [Task({"scenario": self.settings.scenario, "heavy": "", "seed": sd}, sd)
                    for sd in self.seed_list], seed=self.seed_list[0] if self.seed_list else 0)

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        return measure_two_paths(emu, self.settings,
                                 seed=draw_seed(int(task.args), int(task.key["draw"])),
                                 base=dict(task.key), log=log)

    def table(self, rows: Sequence[Row]) -> str:
        return format_two_paths(rows)


def format_two_paths(rows: Sequence[Dict[str, Any]]) -> str:
    """The table the CLI prints: multihoming MMR / STD / AVGT, or delay FCTs, per policy."""
    ok = [r for r in rows if r.get("status") == "ok"]
    bad = [f"{r.get('scenario')} seed {r.get('seed')} {r.get('policy')}: {r.get('status')}: "
           f"{r.get('error')}" for r in rows if r.get("status") != "ok"]
    if ok and str(ok[0].get("scenario")) == "multihoming":
        lines = [f"{'seed':>4} {'policy':>14} {'MMR':>6} {'STD':>7} {'AVGT':>7} {'total':>7} "
                 f"{'on loaded path in burst':>24} {'moves':>6}"]
        for r in ok:
            lines.append(f"{str(r['seed']):>4} {str(r['policy']):>14} {cell_float(r['mmr']):>6.3f} "
                         f"{cell_float(r['std_mbps']):>7.3f} {cell_float(r['avgt_mbps']):>7.3f} "
                         f"{cell_float(r['goodput']):>7.3f} {cell_float(r['burst_share']):>24.2f} "
                         f"{str(r['moves']):>6}")
        lines.append("site flows' throughput over the window in Mbit/s: MMR = min / max, STD, "
                     "AVGT = mean; total in link units; the burst's share on path 1")
    else:
        lines = [f"{'seed':>4} {'policy':>14} {'FCT med':>8} {'p90':>8} {'p99':>8} "
                 f"{'done':>9} {'on idle path':>12}"]
        for r in ok:
            lines.append(f"{str(r['seed']):>4} {str(r['policy']):>14} {cell_float(r['fct_median']):>8.3f} "
                         f"{cell_float(r['fct_p90']):>8.3f} {cell_float(r['fct_p99']):>8.3f} "
                         f"{str(r['completed']) + '/' + str(r['transfers']):>9} "
                         f"{cell_float(r['on_idle']):>12.2f}")
        lines.append("request completion times in s (unfinished = infinite); on idle path: "
                     "share of requests started on the path without background")
    return "\n".join(lines + bad)
