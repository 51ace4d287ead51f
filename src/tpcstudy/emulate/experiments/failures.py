"""Link failures under live TCP, with three reactions (``tpcstudy emulate failures``).

On ``--topo``'s network, the heavy pairs' sr max-flow LP is placed as TCP connections
(:func:`~.placement.place_connections`) and handed to the BPF host agent of every source router
(:func:`~.bpf_placement.placement_table`: weighted round robin gives each path its
connections). ``--at`` seconds after the connects one link is cut (``--cut A,B``, default: the
link of highest utilisation in the LP's solution whose ends are not a source's own router): a
real link event (:func:`~tpcstudy.emulate.network.igp.link_down_lines`). Each reaction is its own
task, measured in its own draws on the same network:

- ``none``: nothing but TCP (no IGP: the cut stays a black hole);
- ``hosts``: the IGP re-converges ``--igp-delay`` after the event
  (:class:`~tpcstudy.emulate.network.igp.Igp`) and the agents run NRTOChanger(``--rto-count``);
- ``controller``: the IGP re-converges and the controller (:mod:`tpcstudy.control`, reaction
  ``reoptimised``, local push), woken by the routers' netlink link event, swaps every changed
  host's table in.

Per connection: **recovery** = first data the receiver read after a stall of at least
``--gap-ms`` following the cut, minus the cut time (the first new data acknowledged); a
connection that never stalled, or whose stall began more than ``--hit-within`` after the cut
(congestion, not the cut), was not hit; one with no data after the cut, or an error, is
**lost**. Goodput over time (the receivers' bytes per 100 ms bin, in link units) beside the
intact LP and the reoptimised LP of the failed graph; ``ratio_2s`` = goodput in the 2 s after the
cut / the reoptimised LP. After each task the link comes back and every router's intact routes
are installed again.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...control.events import NetlinkSource
from ...control.push import LocalPush
from ...control.run import AT, Controller, Loop, Phases
from ...control.tables import TableState, connected_pairs
from ...errors import UsageError
from ...export.layout import encode_value
from ...hostagent.loader import counters, reconfigure
from ...hostagent.maps import ON_UPDATE, SlotPolicy, rto_min_us
from ...metrics import quantile_inf
from ...models.maxflow import max_flow
from ...paths import segment_ratios
from ...study.kinds import KINDS
from ...study.store import cell_float
from ...study.tasks import Task
from ...topology import Topology, without_links
from ..agent.client import Transfer, run_traffic
from ..network import kernel as _ns
from ..network.hostagent import install_agents
from ..network.igp import Igp, LinkWatcher, link_down_lines, link_up_lines, route_line, route_table
from ..network.lifecycle import Emulation
from ..network.spec import payload_share, srh_size
from .bpf_placement import BPF_VARIANT, placement_table
from .harness import Experiment, Log, Row, Unit, pair_tasks, read_plan_file, topology_units
from .placement import Placement, place_connections
from .recovery import BIN, goodput_series, hit_by_cut, timeouts
from .repeats import Metric
from .throughput import lp_solution

__all__ = ["KIND", "COLUMNS", "KEY", "REACTIONS", "FailuresSettings", "Failures", "most_loaded_link",
           "reaction_policy",
           "summary_line", "format_failures"]

KIND = "emulate-failures"
COLUMNS = list(KINDS[KIND].columns)
KEY = list(KINDS[KIND].key)
REACTIONS = ("none", "hosts", "controller")
METRICS = (Metric("recovery_median_s", "median", label="median recovery s"),
           Metric("recovery_p99_s", "median", label="p99 recovery s"),
           Metric("ratio_2s", "mean", label="goodput 2 s / reoptimised LP"),
           Metric("lost", "mean", label="lost connections"),
           Metric("payload_failed", "mean", label="payload/wire", digits=4))


@dataclasses.dataclass
class FailuresSettings:
    reactions: Tuple[str, ...] = REACTIONS
    cut: Optional[Tuple[str, str]] = None
    at: float = 3.0
    observe: float = 6.0
    igp_delay: float = 0.2
    rto_count: int = 1
    gap_ms: float = 100.0
    #: A connection is hit when its stall begins at most this long after the cut (the data
    #: past the cut drains from the queues downstream of it within that; a later stall of a
    #: connection that read through the cut is congestion).
    hit_within: float = 0.5
    per_pair: int = 2
    k: int = 4
    #: The controller's pushes: what a swap does to a connection whose path it removed.
    on_update: str = "rehash"
    #: When the controller handles a link event: once the IGP has re-converged ("igp": every
    #: path of the new table then works, so the moved connections can spread over all of
    #: them), at once ("event": before the IGP, a path whose segments' routes still cross
    #: the cut is a black hole for the connections a swap moves onto it), or both ("both": at
    #: once without those paths, then with them once the IGP has re-converged).
    controller_at: str = "both"
    #: The entries the controller replaces: those whose paths cross a down link ("affected"),
    #: or every entry of the reoptimised LP ("all": the LP's new split of every pair).
    controller_scope: str = "affected"
    #: The controller reaction's agents also run NRTOChanger with this N, as a deployed TPC
    #: agent does beside its controller (0: the pushes alone): a connection the push moved onto
    #: a path where its retransmissions keep being lost moves on at its RTO instead of waiting
    #: out a doubled RTO on the same path.
    controller_rto_count: int = 1
    #: Every host agent's minimum RTO in every reaction (``--rto-min-ms``; None: the kernel's).
    rto_min_ms: Optional[float] = None

    def check(self) -> None:
        rto_min_us(self.rto_min_ms)  # a clear error when out of range
        bad = [r for r in self.reactions if r not in REACTIONS]
        if bad or not self.reactions:
            raise UsageError(f"--reactions {','.join(self.reactions)}: choose from "
                             f"{', '.join(REACTIONS)}")
        if not (self.at > 0 and self.observe > 2):
            raise UsageError("--at must be > 0 and --observe > 2 s")
        if not self.hit_within > 0:
            raise UsageError(f"--hit-within {self.hit_within}: > 0 s")
        if self.controller_scope not in ("affected", "all"):
            raise UsageError(f"--controller-scope {self.controller_scope!r}: affected or all")
        if self.controller_at not in AT:
            raise UsageError(f"--controller-at {self.controller_at!r}: choose from "
                             f"{', '.join(AT)}")
        if self.on_update not in ON_UPDATE:
            raise UsageError(f"--on-update {self.on_update!r}: choose from "
                             f"{', '.join(ON_UPDATE)}")
        if self.controller_rto_count < 0:
            raise UsageError(f"--controller-rto-count {self.controller_rto_count}: 0 or more")
        if not 0 <= self.igp_delay < 60:
            raise UsageError(f"--igp-delay {self.igp_delay}: 0 to 60 s")


def reaction_policy(st: FailuresSettings, reaction: str) -> SlotPolicy:
    """The host agents' slot policy in a reaction's draws: weighted round robin over the table's
    paths, NRTOChanger in ``hosts`` (N = ``rto_count``) and, when asked, in ``controller``
    (``controller_rto_count``); ``none`` never moves a connection."""
    nrto = {"hosts": st.rto_count, "controller": st.controller_rto_count}.get(reaction, 0)
    return SlotPolicy("wrr", nrto=nrto)


def arc_loads(topo: Topology, res: Any) -> np.ndarray:
    """Flow on each arc of the sr solution ``res`` (its paths' ECMP splits)."""
    load = np.zeros(2 * topo.num_links)
    for (s, _t), wps, f in zip([res.pairs[i] for i in res.path_pair], res.paths, res.flows):
        if f <= 0:
            continue
        hops = [topo.index_of(s)] + [topo.index_of(w) for w in wps]
        off, arcs, frac = segment_ratios(topo, np.array(hops[:-1], dtype=np.int32),
                                         np.array(hops[1:], dtype=np.int32))
        np.add.at(load, arcs, frac * f)
    return load


def most_loaded_link(topo: Topology, res: Any, avoid: Sequence[str] = ()) -> Tuple[int, int]:
    """The link (router ids, sorted) of highest utilisation in ``res``, preferring one that
    touches none of ``avoid`` (the sources' routers: their hosts live in the namespace)."""
    util = arc_loads(topo, res) / topo.arc_capacity
    bad = {topo.index_of(a) for a in avoid}
    order = np.argsort(-util, kind="stable").tolist()
    pick = next((a for a in order if int(topo.arc_src[a]) not in bad
                 and int(topo.arc_dst[a]) not in bad), order[0])
    u, v = int(topo.arc_src[pick]), int(topo.arc_dst[pick])
    return (u, v) if u < v else (v, u)


def _restore(emu: Emulation, link: Tuple[int, int]) -> None:
    """The link up and every router's intact routes installed again."""
    spec = emu.spec
    ns, lines = link_up_lines(spec, *link)
    try:
        _ns.run_batch("ip", lines, netns=ns, ipv6=True, label="link up")
    except Exception:  # noqa: BLE001 - already up
        pass
    for r in spec.routers:
        table = route_table(spec)[r.id]
        _ns.run_batch("ip", [route_line(d, nh) for d, nh in table.items()], netns=r.netns,
                      ipv6=True, label=f"intact routes of {r.name}")


#: The SRH room of each reaction's connections: the controller may give a connection any path
#: of the reoptimised LP (up to 9 segments, longer than its own), NRTOChanger any of its entry.
_ROOM = {"none": "path", "hosts": "path", "controller": "max"}
#: The agents' counters a draw reports (summed over the hosts): what became of the connections
#: a table swap or an RTO moved.
_MOVE_COUNTERS = ("connections", "update_kept", "repathed", "rehashed", "repath_plain", "moves",
                  "rto_min_set", "rto_min_failed")


#: The senders' namespaces' TCP counters a draw reports (TcpExt, summed): RTOs fired, those
#: F-RTO found spurious (the segment was not lost), tail-loss probes.
_TCP_EXT = {"TCPTimeouts": "timeouts", "TCPSpuriousRTOs": "spurious_rtos",
            "TCPLossProbes": "loss_probes"}


def _tcp_ext(emu: Emulation, sources: Sequence[str]) -> Dict[str, int]:
    got = _ns.netstat_counters(sorted({emu.spec.router(s).netns for s in sources}), "TcpExt")
    return {v: sum(int(c.get(k, 0)) for c in got.values()) for k, v in _TCP_EXT.items()}


def _agent_counters(emu: Emulation) -> Dict[str, int]:
    out = dict.fromkeys(_MOVE_COUNTERS, 0)
    for inst in emu.agents.values():
        c = counters(inst)
        for k in _MOVE_COUNTERS:
            out[k] += int(c.get(k, 0))
    return out


class _Reactor(threading.Thread):
    """The controller's loop (:class:`~tpcstudy.control.run.Loop`, as ``tpcstudy control
    --network`` runs it) in a thread: the routers' link events to the IGP, then, with a
    controller, to its phases (``--controller-at``)."""

    def __init__(self, watcher: LinkWatcher, igp: Optional[Igp], ctl: Optional[Controller],
                 at: str) -> None:
        super().__init__(daemon=True)
        phases = Phases(at, igp.settled if igp is not None else None) if ctl is not None \
            else None
        self.loop = Loop([NetlinkSource(watcher, igp.event if igp is not None else None)], ctl,
                         phases=phases)
        self.stop = threading.Event()
        self.error = ""

    def run(self) -> None:
        try:
            self.loop.run(self.stop)
        except Exception as exc:  # noqa: BLE001 - reported in the row
            self.error = str(exc)[:200]


class Failures(Experiment):
    """Link failures under live TCP with three reactions (module docstring)."""

    kind = KIND
    columns = COLUMNS
    key = KEY
    figure = "plot_failure_experiment"
    metrics = METRICS
    summary_by = ("scenario", "reaction")
    arm = "reaction"
    compare = ("recovery_median_s",)

    def __init__(self, *, topo: Optional[str] = None, capacity: str = "uniform",
                 weight: str = "hop", plan: Optional[str] = None, heavy: float = 20.0,
                 seed: int = 0, settings: Optional[FailuresSettings] = None,
                 scenario_name: Optional[str] = None, log: Log = print) -> None:
        self.settings = settings or FailuresSettings()
        self.settings.check()
        self.topo, self.capacity, self.weight, self.plan = topo, capacity, weight, plan
        self.scenario_name = scenario_name
        self.heavy, self.seed = float(heavy), int(seed)
        self.plan_obj = read_plan_file(plan)
        nets = list(topology_units(topo, capacity=capacity, weight=weight, plan=self.plan_obj,
                                   scenario_name=scenario_name, need_edges=True, log=log))
        if len(nets) != 1:
            raise UsageError(f"failures runs on one topology; --topo names {len(nets)}")
        self.name, self.topology, plan_o, sc = nets[0]
        self.plan_obj = plan_o or self.plan_obj
        if sc is not None:  # a hand-made network: its own pairs
            self.pairs: List[Tuple[str, str]] = list(sc.pairs)
        else:
            task = pair_tasks(self.name, self.topology, [self.heavy], [self.seed])[0]
            self.pairs = list(task.args)
        st = self.settings
        self.res, self.how = lp_solution(self.topology, self.pairs, "sr", k=st.k)
        self.placement: Placement = place_connections(self.topology, self.res,
                                                      per_pair=st.per_pair)
        sources = sorted({c.source for c in self.placement.connections})
        if st.cut is not None:
            a, b = (self.topology.index_of(x) for x in st.cut)
            if not any({a, b} == {int(x), int(y)} for x, y in
                       zip(self.topology.link_u.tolist(), self.topology.link_v.tolist())):
                raise UsageError(f"--cut {','.join(st.cut)}: no such link in {self.name}")
            self.link = (min(a, b), max(a, b))
        else:
            self.link = most_loaded_link(self.topology, self.res, sources)
        failed = without_links(self.topology, [self.link])
        live = connected_pairs(failed, self.pairs)
        self.res_failed = max_flow(failed, live, model="sr", k=st.k) if live else None
        self.lp_failed = self.res_failed.value if self.res_failed is not None else 0.0
        n = self.topology.names
        log(f"{self.name}: {len(self.pairs)} {'' if sc is not None else 'heavy '}pairs, LP "
            f"{self.res.value:g} "
            f"({len(self.placement.connections)} connections); cut {n[self.link[0]]}-"
            f"{n[self.link[1]]}: reoptimised LP {self.lp_failed:g}")

    def payload_shares(self, mtu: int, reaction: str) -> Tuple[float, float]:
        """The payload share of the wire bytes (:func:`~..network.spec.payload_share`) the
        model implies at ``mtu``: over the intact LP's placed paths (weighted by their LP flow)
        and over the reoptimised LP's paths, with the SRH room of ``reaction``'s agents (the
        connection's own path; with NRTOChanger its entry's longest; with the controller the
        longest SRH, 168 bytes). Goodput over
        the LP cannot exceed them: the LP counts capacity in wire bytes, goodput is payload."""
        longest: Dict[Tuple[str, str], int] = {}
        flows: Dict[Tuple[str, str, Tuple[str, ...]], float] = {}
        for c in self.placement.connections:
            longest[(c.source, c.destination)] = max(longest.get((c.source, c.destination), 0),
                                                     len(c.segments))
            flows[(c.source, c.destination, c.segments)] = c.lp_flow
        num = den = 0.0
        for (s_, t_, segs), f in flows.items():
            room = {"hosts": srh_size(longest[(s_, t_)]), "controller": srh_size(9)}.get(
                reaction, -1)
            num += f * payload_share(mtu, srh_size(len(segs)), room)
            den += f
        intact = num / den if den > 0 else math.nan
        num = den = 0.0
        res = self.res_failed
        if res is not None:
            for path, f in zip(res.paths, res.flows.tolist()):
                if f > 0:
                    room = srh_size(9) if reaction == "controller" else -1
                    num += f * payload_share(mtu, srh_size(len(path) - 1), room)
                    den += f
        return intact, (num / den if den > 0 else math.nan)

    def config(self) -> Dict[str, Any]:
        return {"topo": self.topo, "scenario": self.scenario_name, "capacity": self.capacity,
                "weight": self.weight, "plan": self.plan,
                "heavy": None if self.scenario_name else self.heavy, "seed": self.seed,
                "settings": dataclasses.asdict(self.settings)}

    def seeds(self) -> Optional[List[int]]:
        return [self.seed]

    def units(self, log: Log) -> Iterator[Unit]:
        tasks = [Task({"scenario": self.name, "reaction": r}, r)
                 for r in self.settings.reactions]
        yield Unit(self.name, self.topology, self.plan_obj, tasks, seed=self.seed,
                   prepare=self._prepare)

    def _prepare(self, emu: Emulation) -> None:
        import tempfile
        from pathlib import Path

        from ...export import write_paths

        self.paths = placement_table(emu, self.placement)
        with tempfile.TemporaryDirectory(prefix="tpcstudy-failures-") as tmp:
            write_paths(self.paths, tmp, formats="bpf", variant=BPF_VARIANT)
            emu.agents.update(install_agents(emu, Path(tmp), policy=SlotPolicy("wrr"),
                                             rto_min_ms=self.settings.rto_min_ms))
        emu.wait_quiet()

    def measure(self, emu: Emulation, task: Task, log: Log) -> List[Row]:
        return [self._measure(emu, str(task.args), log)]

    def _measure(self, emu: Emulation, reaction: str, log: Log) -> Row:  # noqa: C901
        st, spec = self.settings, emu.spec
        policy = reaction_policy(st, reaction)
        for src, inst in emu.agents.items():  # the intact table, this reaction's policy
            recs = [(e.key, encode_value(e.prefix, e.paths, BPF_VARIANT))
                    for e in self.paths.entries if e.source == src]
            reconfigure(inst, policy=policy, records=recs, srh_room=_ROOM[reaction])
        igp = Igp(spec, delay=st.igp_delay, log=log) if reaction != "none" else None
        ctl = None
        if reaction == "controller":
            state = TableState(self.topology, spec.plan, self.pairs, list(emu.agents),
                               self.paths, BPF_VARIANT, reaction="reoptimised", k=st.k,
                               only_affected=st.controller_scope == "affected")
            ctl = Controller(state, LocalPush(emu.agents, save=False, on_update=st.on_update))
        watcher = LinkWatcher(spec)
        reactor = _Reactor(watcher, igp, ctl, st.controller_at)
        flows = [Transfer(c.id, c.source, c.destination, cgroup=str(emu.cgroup(c.source)),
                          timeline=True) for c in self.placement.connections]
        ns, lines = link_down_lines(spec, *self.link)

        def cut() -> float:
            t = time.monotonic()
            _ns.run_batch("ip", lines, netns=ns, label="link down")
            return t

        counted = _agent_counters(emu)
        sources = sorted({c.source for c in self.placement.connections})
        tcp0 = _tcp_ext(emu, sources)
        reactor.start()
        try:
            tr = run_traffic(emu, flows, warmup=0.0, seconds=st.at + st.observe, poll_ms=50.0,
                             actions=[(st.at, "cut", cut)])
        finally:
            reactor.stop.set()
            reactor.join(5.0)
            watcher.close()
            if igp is not None:
                igp.stop()
            if ctl is not None:
                ctl.close()
            _restore(emu, self.link)
        moved = {k: v - counted.get(k, 0) for k, v in _agent_counters(emu).items()}
        tcp = {k: v - tcp0[k] for k, v in _tcp_ext(emu, sources).items()}
        t_cut = tr.actions["cut"]
        end = tr.times["stop"]
        rec_s, lost, hit = [], 0, 0
        stalls: List[List[Any]] = []
        by_id = {c.id: c for c in self.placement.connections}
        for f in flows:
            r = tr.transfers[f.id]
            state_, v, gap = hit_by_cut(r.timeline, t_cut, end, st.gap_ms / 1000.0,
                                        st.hit_within)
            later = state_ in ("later", "earlier")  # not the cut's stall
            if r.error or state_ == "not recovered":
                lost += 1
                hit += 1
                rec_s.append(math.inf)
            elif state_ == "ok" and not later:
                hit += 1
                rec_s.append(v)
            elif not later:
                continue
            # per stalled connection: its pair, the stall (last read before, first after, from
            # the cut), the sender's RTO and smoothed RTT at the end, the segments it
            # retransmitted over the run, the timeouts the stall spans (an estimate), and
            # whether it counts as hit (0: a stall beginning after --hit-within, or one under
            # way at least --gap-ms before the cut)
            info = r.tcp_info
            rto = info.get("rto_us", 0) / 1e6
            c = by_id[f.id]
            stalls.append([f.id, c.source, c.destination,
                           round(gap[0], 4) if gap else None,
                           round(gap[1], 4) if gap and math.isfinite(gap[1]) else "inf",
                           round(rto * 1e3, 1), round(info.get("rtt_us", 0) / 1e3, 1),
                           int(info.get("total_retrans", 0)),
                           timeouts(gap[1] - gap[0], rto) if gap else -1, int(not later)])
        rec_sorted = sorted(rec_s)
        series = goodput_series([tr.transfers[f.id].timeline for f in flows], t_cut - st.at,
                                end)
        k_cut = int(round(st.at / BIN))
        after = series[k_cut:k_cut + int(round(2.0 / BIN))]
        before = series[max(0, k_cut - int(round(1.0 / BIN))):k_cut]
        units = spec.rate_units
        lp_i, lp_f = self.res.value / spec.unit, self.lp_failed / spec.unit
        g2 = units(float(np.mean(after))) if after else math.nan
        igp_ms = ((igp.history[0].installed_at - t_cut) * 1e3
                  if igp is not None and igp.history else math.nan)
        seen = reactor.loop.events
        ctl_rec = next((x for x in reactor.loop.records if not x.get("unchanged")), None)
        share_i, share_f = self.payload_shares(spec.mtu, reaction)
        n = self.topology.names
        row: Row = {
            "scenario": self.name, "reaction": reaction,
            "heavy": "" if self.scenario_name else self.heavy, "seed": self.seed,
            "cut": f"{n[self.link[0]]}-{n[self.link[1]]}", "at": st.at,
            "connections": len(flows), "hit": hit, "recovered": hit - lost, "lost": lost,
            "recovery_median_s": quantile_inf(rec_sorted, 0.5) if rec_sorted else math.nan,
            "recovery_p99_s": quantile_inf(rec_sorted, 0.99) if rec_sorted else math.nan,
            "recovery_s": json.dumps([round(x, 4) if math.isfinite(x) else "inf"
                                      for x in rec_s]),
            "goodput_before": round(units(float(np.mean(before))), 6) if before else math.nan,
            "goodput_2s": round(g2, 6), "lp_intact": round(lp_i, 6),
            "lp_reoptimised": round(lp_f, 6),
            "ratio_2s": round(g2 / lp_f, 6) if lp_f > 0 else math.nan,
            "series": json.dumps([round(units(x), 4) for x in series]),
            "igp_ms": round(igp_ms, 1),
            "detect_ms": round((seen[0].at - t_cut) * 1e3, 1) if seen else math.nan,
            "control_ms": round((ctl_rec["done_mono"] - t_cut) * 1e3, 1) if ctl_rec
            else math.nan,
            "compute_ms": ctl_rec.get("compute_ms", math.nan) if ctl_rec else math.nan,
            "push_ms": ctl_rec.get("push_ms", math.nan) if ctl_rec else math.nan,
            "swap_ms": ctl_rec.get("swap_ms", math.nan) if ctl_rec else math.nan,
            "pushed": len(ctl_rec.get("pushed", [])) if ctl_rec else 0,
            "agent_counters": json.dumps(moved, sort_keys=True),
            "stalls": json.dumps(stalls),
            "mtu": spec.mtu, "payload_intact": round(share_i, 4),
            "payload_failed": round(share_f, 4),
            "link_mbps": spec.link_mbps, "cpu_busy": round(tr.cpu_busy, 4),
            "status": "ok" if not (reactor.error or (igp and igp.errors)) else "failed",
            "error": reactor.error or "; ".join(igp.errors if igp else []),
            "rto_min_ms": st.rto_min_ms if st.rto_min_ms is not None else "",
            "retrans": sum(int(tr.transfers[f.id].tcp_info.get("total_retrans", 0))
                           for f in flows),  # every sender's segments retransmitted
            "tcp_ext": json.dumps(tcp, sort_keys=True)}
        log(f"{self.name} {reaction}: recovery median {row['recovery_median_s']:.3f} s, p99 "
            f"{row['recovery_p99_s']:.3f} s over {hit} hit of {len(flows)}, lost {lost}; "
            f"goodput 2 s after the cut {g2:.3f} units = {row['ratio_2s']:.2f} of the "
            f"reoptimised LP ({lp_f:.3f}; intact {lp_i:.3f}); before the cut "
            f"{row['goodput_before'] / lp_i:.2f} of the intact LP; payload/wire at MTU "
            f"{spec.mtu}: {share_i:.3f} intact, {share_f:.3f} reoptimised; igp {row['igp_ms']} ms"
            + (f"; control: detect {row['detect_ms']} compute {row['compute_ms']} push "
               f"{row['push_ms']} swap {row['swap_ms']} ms" if ctl_rec else "")
            + f"; agents: {', '.join(f'{k} {v}' for k, v in moved.items() if v)}")
        return row

    def table(self, rows: Sequence[Row]) -> str:
        return format_failures(rows)

    def report(self, outcome: Any) -> str:
        """The summary over the draws (intervals), then the pooled table (recovery over every
        hit connection of every draw, the payload share beside the goodput ratios)."""
        text = super().report(outcome)
        draws = {str(r.get("draw", 0)) for r in outcome.rows}
        return text if len(draws) <= 1 else text + "\n" + format_failures(outcome.rows)


def format_failures(rows: Sequence[Row]) -> str:
    lines = [f"{'scenario':>10} {'reaction':>10} {'mtu':>5} {'draws':>5} {'median s':>9} "
             f"{'p99 s':>7} {'lost':>5} {'before/LP':>9} {'goodput2s/LP':>12} "
             f"{'payload/wire':>12} {'2s/(LPxpw)':>10}"]
    for sc in sorted({str(r.get("scenario")) for r in rows}):
        for re_ in REACTIONS:
            sel = [r for r in rows if r.get("scenario") == sc and r.get("reaction") == re_
                   and r.get("status") == "ok"]
            if not sel:
                continue
            rec = sorted(v for r in sel for v in _recoveries(r))
            med = quantile_inf(rec, 0.5) if rec else math.nan
            p99 = quantile_inf(rec, 0.99) if rec else math.nan
            lost = sum(int(v) for v in (cell_float(r.get("lost")) for r in sel) if v == v)
            ratio = float(np.mean([cell_float(r.get("ratio_2s")) for r in sel]))
            before = float(np.mean([cell_float(r.get("goodput_before"))
                                    / cell_float(r.get("lp_intact")) for r in sel]))
            share = float(np.mean([cell_float(r.get("payload_failed")) for r in sel]))
            mtu = str(sel[0].get("mtu") or "")
            lines.append(f"{sc:>10} {re_:>10} {mtu:>5} {len(sel):>5} {med:>9.3f} {p99:>7.3f} "
                         f"{lost:>5} {before:>9.3f} {ratio:>12.3f} {share:>12.3f} "
                         f"{ratio / share:>10.3f}")
    lines.append("recovery over every hit connection of every draw (inf: lost); before/LP: "
                 "goodput in the 1 s before the cut / the intact LP; goodput2s/LP: in the 2 s "
                 "after the cut / the reoptimised LP of the failed graph; payload/wire: the "
                 "payload share of a full packet's wire bytes (IPv6, SRH, TCP with timestamps, "
                 "Ethernet) over the reoptimised LP's paths at that MTU, the ceiling of the "
                 "goodput ratios (the LP counts wire bytes); 2s/(LPxpw): the ratio over it")
    return "\n".join(lines)


def float_list(text: Any) -> List[float]:
    """A cell holding a JSON list of numbers (``"inf"`` for a connection never recovered) as
    floats; anything else as an empty list."""
    try:
        vals = json.loads(str(text or "[]"))
    except ValueError:
        return []
    if not isinstance(vals, list):
        return []
    return [math.inf if v == "inf" else float(v) for v in vals
            if v == "inf" or isinstance(v, (int, float))]


def _recoveries(r: Row) -> List[float]:
    return float_list(r.get("recovery_s"))


def summary_line(rows: Sequence[Row]) -> str:
    out = []
    for re_ in REACTIONS:
        rec = sorted(v for r in rows if r.get("reaction") == re_ for v in _recoveries(r))
        if rec:
            out.append(f"{re_}: median recovery {quantile_inf(rec, 0.5):.3f} s over {len(rec)} "
                       f"connections")
    return "; ".join(out)
