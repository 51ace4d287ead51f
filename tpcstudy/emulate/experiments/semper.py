"""Real MPTCP (the kernel's, ``IPPROTO_MPTCP``) on the emulated network, and SEMPER's dumbbell.

SEMPER ("A Stateless Traffic Engineering Solution for WAN based on MP-TCP", Garcia-Aviles et al.)
gives each host K subflows and lets the network's ECMP hashing spread them over the equal-cost
paths, with no state in the routers. The study's ``mptcp:K`` model (docs/method.md §4) is that
idea on paper: each subflow follows one path drawn by per-hop hashing. Here it runs for real:

- **subflows**: the source router gets K - 1 more addresses of its host prefix on ``lo``, each an
  in-kernel path-manager endpoint with the ``subflow`` flag (``ip mptcp endpoint add ADDR
  subflow``; not ``dev lo``: a subflow bound to ``lo`` cannot leave the router), and both ends
  raise ``ip mptcp limits``. Each subflow has its own source address and port, so the routers'
  ECMP hash (the 5-tuple with a seed per namespace: independent per-hop choices, as the model
  assumes) places each on one path; two subflows may land on the same path (a collision).
- **dumbbell** (:func:`dumbbell`): routers ``A`` and ``B`` joined by P equal-cost two-hop paths
  ``A - Pj - B`` of capacity 1; N clients ``C1..CN`` behind ``A`` and N servers ``S1..SN`` behind
  ``B`` on access links of capacity P (never the bottleneck); client ``Ci`` opens one MPTCP
  connection with K subflows to ``Si``. The LP optimum is P (every path full); the ``mptcp:K``
  model's value (the mean over hash draws) says how much of it K hashed subflows reach.
- :func:`run_dumbbell` measures, for each P and K, the total goodput (in path units) and Jain's
  fairness index over the hosts, with the subflows that came up, beside the model's value.
- :func:`run_fault` is SEMPER's fault test: on a dumbbell of 3 paths, path 1 fails mid-run (its
  first hop drops everything; routes stay, as before any routing reaction); per 1 s window, the
  total goodput and Jain's index over the hosts, for MPTCP with K subflows against single-path
  TCP pinned by SRH to one path per host (host i starts on path i) with the TPC agent's
  TimeoutChanger (move the live socket to the next path after T ms without progress).
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import subprocess
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .. import Topology, default_plan, max_flow
from ..errors import EmulationError, UsageError
from ..metrics import jain_index
from ..study.emulation import FAULT as FAULT_KIND
from ..study.emulation import MPTCP as MPTCP_KIND
from ..study.store import folder_lock, open_store, read_results
from ..study.tasks import task_id
from .agent import IPPROTO_MPTCP
from .checks import system_info
from .lifecycle import Emulation, new_prefix
from .scenarios import Scenario
from .spec import PACKET_BYTES, NetworkSpec, network_spec
from .srh import srh_bytes
from .traffic import Flow, run_flows

__all__ = ["dumbbell", "subflow_commands", "enable_subflows", "joins_received", "mptcp_counters",
           "mptcp_model_value", "run_dumbbell", "run_fault",
           "window_series", "FAULT_COLUMNS", "FAULT_KEY", "COLUMNS", "KEY",
           "MPTCP_KIND", "MAX_SUBFLOWS", "model_value", "mptcp_available"]

#: The kernel's limit on subflows per connection (``ip mptcp limits``).
MAX_SUBFLOWS = 8
COLUMNS = ["scenario", "paths", "hosts", "subflows", "seed", "lp_value", "model_value",
           "measured", "ratio", "jain", "joined", "expected_joins", "link_mbps", "seconds",
           "cpu_busy", "per_host", "path_use"]
KEY = ["scenario", "paths", "hosts", "subflows", "seed"]


def dumbbell(paths: int = 2, hosts: int = 4) -> Scenario:
    """SEMPER's dumbbell (module docstring): P equal-cost paths, N client/server pairs."""
    if not 1 <= paths <= 64 or not 1 <= hosts <= 64:
        raise UsageError(f"dumbbell: paths {paths} and hosts {hosts} must be in 1..64")
    nodes = ["A", "B"] + [f"P{j}" for j in range(1, paths + 1)] \
        + [f"C{i}" for i in range(1, hosts + 1)] + [f"S{i}" for i in range(1, hosts + 1)]
    idx = {n: i for i, n in enumerate(nodes)}
    links: List[Tuple[str, str, float]] = []
    for j in range(1, paths + 1):
        links += [("A", f"P{j}", 1.0), ("B", f"P{j}", 1.0)]
    for i in range(1, hosts + 1):
        links += [("A", f"C{i}", float(paths)), ("B", f"S{i}", float(paths))]
    u = np.array([min(idx[a], idx[b]) for a, b, _ in links], dtype=np.int32)
    v = np.array([max(idx[a], idx[b]) for a, b, _ in links], dtype=np.int32)
    cap = np.repeat([c for _, _, c in links], 2).astype(np.float64)
    meta = {"capacity_unit": "link", "capacity_rule": f"dumbbell: 1 per path link, {paths} per "
            "access link", "weight_rule": "dumbbell: hop (all paths equal cost)", "pruned": True,
            "source": "scenario dumbbell"}
    topo = Topology(f"dumbbell-{paths}x{hosts}", nodes, u, v, cap, np.ones(len(cap)), meta=meta)
    ends = [f"C{i}" for i in range(1, hosts + 1)] + [f"S{i}" for i in range(1, hosts + 1)]
    plan = default_plan(topo, edge_routers=ends)
    pairs = [(f"C{i}", f"S{i}") for i in range(1, hosts + 1)]
    return Scenario(topo.name, topo, pairs, plan, 1,
                    f"SEMPER's dumbbell: {paths} equal-cost paths between A and B; {hosts} "
                    "clients behind A send to as many servers behind B, one MPTCP connection "
                    "each")


def subflow_commands(spec: NetworkSpec, sources: Sequence[str], destinations: Sequence[str],
                     k: int) -> List[Tuple[str, List[str]]]:
    """The ``(namespace, ip argv)`` commands giving every source's MPTCP connections ``k``
    subflows (module docstring): limits on both ends; on each source, its endpoints flushed, then
    ``k - 1`` extra addresses (``addr replace``: running it again for another K is fine) and
    their endpoints."""
    if not 1 <= int(k) <= MAX_SUBFLOWS:
        raise UsageError(f"subflows {k}: the kernel allows 1 to {MAX_SUBFLOWS} per connection")
    out: List[Tuple[str, List[str]]] = []
    for name in dict.fromkeys(list(sources) + list(destinations)):
        ns = spec.router(name).netns
        out.append((ns, ["mptcp", "limits", "set", "subflow", str(MAX_SUBFLOWS),
                         "add_addr_accepted", str(MAX_SUBFLOWS)]))
    for name in dict.fromkeys(sources):
        r = spec.router(name)
        if not r.prefixes:
            raise UsageError(f"router {name!r} has no host prefix for extra subflow addresses")
        out.append((r.netns, ["mptcp", "endpoint", "flush"]))
        base = spec.host(name)
        taken = {r.loopback, *r.hosts}
        extra = 0
        for i in range(1, 1 << 16):
            if extra == k - 1:
                break
            a = ipaddress.IPv6Address(int(base) + i)
            if a in taken or a not in r.prefixes[0]:
                continue
            out.append((r.netns, ["addr", "replace", f"{a}/128", "dev", "lo"]))
            out.append((r.netns, ["mptcp", "endpoint", "add", str(a), "subflow"]))
            extra += 1
    return out


def enable_subflows(emu: Emulation, sources: Sequence[str], destinations: Sequence[str],
                    k: int) -> None:
    """Run :func:`subflow_commands` in the built network."""
    for ns, argv in subflow_commands(emu.spec, sources, destinations, k):
        res = subprocess.run(["ip", "-n", ns, *argv], capture_output=True, text=True)
        if res.returncode:
            raise EmulationError(f"ip -n {ns} {' '.join(argv)}: {res.stderr.strip()}")


def mptcp_counters(spec: NetworkSpec, routers: Sequence[str], names: Sequence[str]
                   ) -> Dict[str, int]:
    """The kernel's ``MPTcpExt`` counters ``names`` summed over the ``routers``' namespaces
    (``/proc/net/netstat``; a counter this kernel lacks reads 0)."""
    total = dict.fromkeys(names, 0)
    for name in routers:
        res = subprocess.run(["ip", "netns", "exec", spec.router(name).netns, "cat",
                              "/proc/net/netstat"], capture_output=True, text=True, check=True)
        lines = [ln.split() for ln in res.stdout.splitlines() if ln.startswith("MPTcpExt:")]
        if len(lines) >= 2:
            for key in names:
                if key in lines[0]:
                    total[key] += int(lines[1][lines[0].index(key)])
    return total


def joins_received(spec: NetworkSpec, routers: Sequence[str]) -> int:
    """MP_JOIN handshakes the ``routers`` completed as receivers (subflows that came up)."""
    return mptcp_counters(spec, routers, ["MPJoinAckRx"])["MPJoinAckRx"]


def mptcp_available() -> Optional[str]:
    """``None`` when this kernel opens MPTCP sockets, else why not."""
    import socket

    try:
        socket.socket(socket.AF_INET6, socket.SOCK_STREAM, IPPROTO_MPTCP).close()
    except OSError as exc:
        return f"no MPTCP sockets ({exc.strerror or exc}; kernel CONFIG_MPTCP, sysctl " \
               "net.mptcp.enabled=1)"
    return None


def mptcp_model_value(topo: Topology, pairs: Sequence[Tuple[str, str]], k: int,
                      draws: int = 32, solver: str = "highs") -> Tuple[float, float]:
    """The analytic ``mptcp:K`` value on ``pairs``: mean and standard deviation over hash draws
    (seeds 0..draws-1), in the topology's capacity units."""
    vals = [max_flow(topo, list(pairs), model="mptcp", subflows=k, seed=s, solver=solver).value
            for s in range(draws)]
    return float(np.mean(vals)), float(np.std(vals))


def model_value(sc: Scenario, k: int, draws: int = 32) -> float:
    """The ``mptcp:K`` model's value on the scenario's pairs, the mean over ``draws`` hash
    draws (seeds 0..draws-1)."""
    return mptcp_model_value(sc.topology, sc.pairs, k, draws)[0]


def run_dumbbell(*, out: Optional[str], paths: Sequence[int] = (2, 4, 8),
                 subflows: Sequence[int] = (1, 2, 4, 8), hosts: int = 4,
                 seeds: Sequence[int] = (0,),
                 link_mbps: float = 10.0, queue_ms: float = 50.0, seconds: float = 10.0,
                 warmup: float = 3.0, overwrite: bool = False,
                 log: Callable[[str], None] = print) -> List[Dict[str, Any]]:
    """Measure the dumbbell for every P in ``paths``, K in ``subflows`` and seed of the routers'
    ECMP hash (module docstring); with ``out``, rows are stored as they finish (re-running
    resumes)."""
    for k in subflows:
        if not 1 <= int(k) <= MAX_SUBFLOWS:
            raise UsageError(f"--subflows {k}: the kernel allows 1 to {MAX_SUBFLOWS} per connection")
    why = mptcp_available()
    if why:
        raise EmulationError(f"dumbbell needs MPTCP: {why}")
    with contextlib.ExitStack() as stack:
        store = None
        if out:
            stack.enter_context(folder_lock(out))
            config = {"scenario": "dumbbell", "paths": list(paths), "subflows": list(subflows),
                      "hosts": hosts, "link_mbps": link_mbps, "queue_ms": queue_ms,
                      "seconds": seconds, "warmup": warmup, "system": system_info(),
                      "subflow_rule": "K-1 extra source addresses as 'subflow' endpoints; "
                                      f"limits {MAX_SUBFLOWS}; ECMP on the 5-tuple, seeded per "
                                      "namespace"}
            store = open_store(out, config, kind=MPTCP_KIND, columns=COLUMNS, key=KEY,
                               seeds=list(seeds), overwrite=overwrite)
        rows: List[Dict[str, Any]] = []
        for p, seed in ((p, s) for p in paths for s in seeds):
            sc = dumbbell(int(p), hosts)
            for k in subflows:
                key = {"scenario": "dumbbell", "paths": int(p), "hosts": hosts,
                       "subflows": int(k), "seed": seed}
                tid = task_id(key)
                if store is not None and store.done(tid) and not store.failed(tid):
                    log(f"dumbbell P={p} K={k}: already in {out}")
                    continue
                row = dict(key, **_measure(sc, int(k), seed, link_mbps, queue_ms, seconds,
                                           warmup))
                log(f"dumbbell P={p} K={k}: {row['measured']:.2f} of {row['lp_value']:.0f} paths "
                    f"(model {row['model_value']:.2f}), Jain {row['jain']:.3f}, subflows joined "
                    f"{row['joined']}/{row['expected_joins']}")
                rows.append(row)
                if store is not None:
                    store.put(tid, [row])
                    store.flush()
        if store is not None:
            return [dict(r) for r in read_results(store.flush(force=True))]
        return rows


def _path_arcs(sc: Scenario) -> List[int]:
    """The arcs ``A > Pj`` (the first hop of each path), in path order."""
    topo = sc.topology
    return [topo.arc_of("A", n) for n in topo.names if n.startswith("P")]


def _path_use(snaps: Sequence[Dict[int, int]], arcs: Sequence[int], seconds: float,
              spec: NetworkSpec) -> List[float]:
    """Each path's first hop: the share of its rate the packets sent between the two snapshots
    took (full-size frames), i.e. how busy the hash and the scheduler kept it."""
    if len(snaps) < 2 or seconds <= 0:
        return [math.nan] * len(arcs)
    rate = {i.arc: i.rate_bps for r in spec.routers for i in r.interfaces}
    return [(snaps[1][a] - snaps[0][a]) * PACKET_BYTES * 8.0 / (rate[a] * seconds) for a in arcs]


def _measure(sc: Scenario, k: int, seed: int, link_mbps: float, queue_ms: float,
             seconds: float, warmup: float) -> Dict[str, Any]:
    spec = network_spec(sc.topology, sc.plan, prefix=new_prefix(), link_mbps=link_mbps,
                        queue_ms=queue_ms, seed=seed)
    sources = [s for s, _ in sc.pairs]
    dests = [d for _, d in sc.pairs]
    arcs = _path_arcs(sc)
    snaps: List[Dict[int, int]] = []
    with Emulation(spec) as emu:
        enable_subflows(emu, sources, dests, k)
        flows = [Flow(i, s, d, mptcp=True) for i, (s, d) in enumerate(sc.pairs)]
        res = run_flows(emu, flows, warmup=warmup, seconds=seconds,
                        actions=[(warmup, "c0", lambda: snaps.append(emu.tx_packets())),
                                 (warmup + seconds, "c1", lambda: snaps.append(emu.tx_packets()))])
        joined = joins_received(spec, dests)
    use = _path_use(snaps, arcs, res.actions["c1"] - res.actions["c0"], spec)
    unit = link_mbps * 1e6
    per_host = [res.goodput_bps([f.id]) / unit for f in flows]
    total = sum(per_host)
    lp = float(len([n for n in sc.topology.names if n.startswith("P")]))
    return {"lp_value": lp, "model_value": round(model_value(sc, k), 6),
            "measured": round(total, 4), "ratio": round(total / lp, 4) if lp else math.nan,
            "jain": round(jain_index(per_host), 4), "joined": joined,
            "expected_joins": len(sc.pairs) * (k - 1), "link_mbps": link_mbps,
            "seconds": round(res.seconds, 3), "cpu_busy": round(res.cpu_busy, 3),
            "per_host": " ".join(f"{x:.3f}" for x in per_host),
            "path_use": " ".join(f"{x:.3f}" for x in use)}


FAULT_COLUMNS = ["scenario", "strategy", "second", "total", "jain", "failed", "per_host",
                 "path_use", "paths", "hosts", "subflows", "timeout_ms", "fail_after", "link_mbps", "seed"]
FAULT_KEY = ["scenario", "strategy", "second", "seed"]


def window_series(timeline: Sequence[Sequence[float]], t0: float, windows: int,
                  width: float = 1.0) -> List[float]:
    """Bytes received in each window ``[t0 + i width, t0 + (i + 1) width)`` from a receiver
    timeline ``[[t, cumulative bytes], ...]``."""
    out = [0.0] * windows
    last = 0.0
    for t, cum in sorted(((float(t), float(b)) for t, b in timeline)):
        i = int((t - t0) // width)
        if 0 <= i < windows:
            out[i] += cum - last
        last = cum
    return out


def run_fault(*, out: Optional[str], paths: int = 3, hosts: int = 3, subflows: int = 4,
              timeout_ms: float = 100.0, fail_after: float = 5.0, observe: float = 10.0,
              seeds: Sequence[int] = (0,), link_mbps: float = 10.0, queue_ms: float = 50.0,
              overwrite: bool = False, log: Callable[[str], None] = print
              ) -> List[Dict[str, Any]]:
    """SEMPER's fault test (module docstring): one row per strategy and 1 s window."""
    why = mptcp_available()
    if why:
        raise EmulationError(f"the fault test needs MPTCP: {why}")
    if paths < 2:
        raise UsageError("the fault test needs at least 2 paths (one fails)")
    sc = dumbbell(paths, hosts)
    windows = int(math.ceil(fail_after + observe))
    base = {"scenario": "fault", "paths": paths, "hosts": hosts, "subflows": subflows,
            "timeout_ms": timeout_ms, "fail_after": fail_after, "link_mbps": link_mbps}
    with contextlib.ExitStack() as stack:
        store = None
        if out:
            stack.enter_context(folder_lock(out))
            config = dict(base, observe=observe, queue_ms=queue_ms, system=system_info(),
                          failure="path 1's first hop (A > P1) drops everything; routes stay")
            store = open_store(out, config, kind=FAULT_KIND, columns=FAULT_COLUMNS, key=FAULT_KEY,
                               seeds=list(seeds), overwrite=overwrite)
        rows: List[Dict[str, Any]] = []
        for seed, strategy in ((x, y) for x in seeds for y in ("mptcp", "tcp+timeout")):
            tid = task_id({"scenario": "fault", "strategy": strategy, "seed": seed})
            if store is not None and store.done(tid) and not store.failed(tid):
                log(f"fault {strategy}: already in {out}")
                continue
            got, use = _fault_run(sc, strategy, subflows, timeout_ms, fail_after, windows,
                                  seed, link_mbps, queue_ms)
            found: List[Dict[str, Any]] = [
                dict(base, strategy=strategy, seed=seed, second=i, total=round(sum(v), 4),
                     jain=round(jain_index(v), 4), failed=i >= fail_after,
                     per_host=" ".join(f"{x:.3f}" for x in v),
                     path_use=" ".join(f"{x:.3f}" for x in use[i]))
                for i, v in enumerate(got)]
            before = [r for r in found if not r["failed"] and r["second"] >= 1]
            after = [r for r in found if r["failed"] and r["second"] >= fail_after + 1]
            log(f"fault {strategy}, seed {seed}: before the failure {_mean(before, 'total'):.2f} paths (Jain "
                f"{_mean(before, 'jain'):.2f}), after {_mean(after, 'total'):.2f} (Jain "
                f"{_mean(after, 'jain'):.2f})")
            rows += found
            if store is not None:
                store.put(tid, found)
                store.flush()
        if store is not None:
            return [dict(r) for r in read_results(store.flush(force=True))]
        return rows


def _mean(rows: Sequence[Mapping[str, Any]], col: str) -> float:
    vals = [float(r[col]) for r in rows]
    return float(np.mean(vals)) if vals else math.nan


def _fault_run(sc: Scenario, strategy: str, k: int, timeout_ms: float, fail_after: float,
               windows: int, seed: int, link_mbps: float, queue_ms: float
               ) -> Tuple[List[List[float]], List[List[float]]]:
    """Per 1 s window, each host's goodput in paths, and each path's use (its first hop)."""
    spec = network_spec(sc.topology, sc.plan, prefix=new_prefix(), link_mbps=link_mbps,
                        queue_ms=queue_ms, seed=seed)
    topo, plan = sc.topology, sc.plan
    npaths = len([n for n in topo.names if n.startswith("P")])
    with Emulation(spec) as emu:
        if strategy == "mptcp":
            enable_subflows(emu, [s for s, _ in sc.pairs], [d for _, d in sc.pairs], k)
            flows = [Flow(i, s, d, mptcp=True, timeline=True) for i, (s, d) in enumerate(sc.pairs)]
        else:
            flows = []
            for i, (s, d) in enumerate(sc.pairs):
                order = [(i + j) % npaths + 1 for j in range(npaths)]  # host i starts on path i
                srhs = [srh_bytes([plan.loopback(f"P{j}"), plan.loopback(d)]) for j in order]
                flows.append(Flow(i, s, d, srhs, {"kind": "timeout", "ms": timeout_ms},
                                  timeline=True))
        arc = topo.arc_of("A", "P1")
        snaps: List[Dict[int, int]] = []

        def snap() -> None:  # at every whole second: each path's use per window
            snaps.append(emu.tx_packets())

        try:
            res = run_flows(emu, flows, warmup=0.0, seconds=windows,
                            actions=[(float(i), f"c{i}", snap) for i in range(windows + 1)]
                            + [(fail_after, "fail", lambda: emu.fail_arc(arc))])
        finally:
            emu.restore_arc(arc)
    arcs = _path_arcs(sc)
    use = [_path_use(snaps[i:i + 2], arcs, 1.0, spec) for i in range(len(snaps) - 1)]
    t0 = res.times["connect"]
    unit = link_mbps * 1e6 / 8.0
    per = [window_series(res.flows[f.id].timeline, t0, windows) for f in flows]
    return ([[per[h][i] / unit for h in range(len(flows))] for i in range(windows)],
            use + [[math.nan] * len(arcs)] * (windows - len(use)))
