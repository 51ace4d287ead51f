"""The core's worker threads: an exception in one reaches Python as an exception (not
std::terminate), every batch entry point takes a thread budget that changes no result, no call
runs more threads than the CPUs of the process's affinity, a pool's workers share the CPUs, and
the sr-path waypoint recovery never returns a router id out of range."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap

import networkx as nx
import numpy as np
import pytest

import tpcstudy
import tpcstudy._core as _core
from tpcstudy import UsageError
from tpcstudy import paths as P
from tpcstudy.study.executors import ProcessExecutor, worker_threads

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="RLIMIT_AS, sched_setaffinity and /proc are Linux's")


def _graph(n: int, extra: int, seed: int) -> tpcstudy.Topology:
    """A connected random graph on routers 0..n-1, integer weights 1..3 (ECMP ties included)."""
    rng = random.Random(seed)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for v in range(1, n):
        g.add_edge(v, rng.randrange(v))
    for _ in range(extra):
        g.add_edge(*rng.sample(range(n), 2))
    for u, v in g.edges:
        g[u][v]["weight"] = rng.randint(1, 3)
    return tpcstudy.read_topology(g, weight="file")


def _run(script: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``script`` in a fresh interpreter: a core that aborts kills it, not the test run."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=timeout)


# ----------------------------------------------------------------- exceptions in worker threads
@linux_only
def test_worker_bad_alloc_is_memory_error():
    """A segment limit of 2^30 makes every worker thread's DP table (best_sr_paths) or sps
    search table (disjoint_paths, sps_second_segments) terabytes: each worker throws
    std::bad_alloc. That was std::terminate (the interpreter aborted with SIGABRT); now the first
    one is a MemoryError in the caller, and the core keeps working. The address-space limit makes
    the allocation fail whatever the kernel's overcommit policy (without it an overcommitting
    kernel could grant it, and zeroing it would summon the OOM killer)."""
    r = _run("""
        import random, resource
        import networkx as nx
        import numpy as np
        import tpcstudy, tpcstudy._core as core
        from tpcstudy import paths as P

        rng = random.Random(1)
        g = nx.Graph()
        g.add_nodes_from(range(40))
        for v in range(1, 40):
            g.add_edge(v, rng.randrange(v))
        for _ in range(60):
            g.add_edge(*rng.sample(range(40), 2))
        topo = tpcstudy.read_topology(g)
        n = topo.num_nodes
        s, t = np.array([(u, v) for u in range(n) for v in range(n) if u != v], np.int32).T
        costs = P.segment_costs(topo, np.ones(2 * topo.num_links))
        want = P.best_sr_paths(topo, costs, s, t, 3)
        want_sps = P.disjoint_path_counts(topo, s, t, method="sps", k=3)
        huge = 2 ** 30
        resource.setrlimit(resource.RLIMIT_AS, (64 << 30, resource.RLIM_INFINITY))
        calls = {
            "best_sr_paths": lambda: P.best_sr_paths(topo, costs, s, t, huge, threads=2),
            "disjoint_paths": lambda: P.disjoint_path_counts(topo, s, t, method="sps", k=huge,
                                                             threads=2),
            "sps_second_segments": lambda: core.sps_second_segments(
                topo.graph, P._routing(topo), s, t, huge, 2),
        }
        for name, call in calls.items():
            try:
                call()
                print(name, "no error")
            except MemoryError:
                print(name, "MemoryError")
        # the core still works (no thread left behind, nothing corrupted)
        got = P.best_sr_paths(topo, costs, s, t, 3, threads=2)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
        assert np.array_equal(P.disjoint_path_counts(topo, s, t, method="sps", k=3, threads=2),
                              want_sps)
        print("still fine")
    """)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}"
    assert "terminate called" not in r.stderr
    assert r.stdout.split("\n") == ["best_sr_paths MemoryError", "disjoint_paths MemoryError",
                                    "sps_second_segments MemoryError", "still fine", ""]


# ----------------------------------------------------------------- the thread budget
@pytest.fixture(scope="module")
def batch():
    topo = _graph(90, 120, seed=3)
    n = topo.num_nodes
    s, t = np.array([(u, v) for u in range(n) for v in range(n) if u != v], np.int32).T
    prices = np.random.default_rng(0).uniform(0.0, 1.0, 2 * topo.num_links)
    return topo, s, t, prices


def _results(topo, s, t, prices, threads):
    costs = P.segment_costs(topo, prices)
    out = {"bounds": P.path_price_bounds(topo, prices, s, t, 2.0, threads=threads),
           "sr": P.best_sr_paths(topo, costs, s, t, 4, threads=threads),
           "second": P.sps_second_segments(topo, s, t, 4, threads=threads)}
    for method, k in (("max", None), ("greedy", None), ("sps", 3)):
        b = P.disjoint_paths_batch(topo, s, t, method=method, k=k, threads=threads)
        out[method] = (b.pair_offsets, b.nodes, b.waypoints, b.links, b.costs)
    return out


def _same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        for u, v in zip(x, y) if isinstance(x, tuple) else [(x, y)]:
            assert np.array_equal(u, v), key


def test_thread_count_changes_no_result(batch):
    """threads = 1 (inline), 2, 0 (every CPU) and more than the CPUs give the same arrays, with
    enough sources and pairs for every entry point to start several threads."""
    topo, s, t, prices = batch
    one = _results(topo, s, t, prices, 1)
    assert np.isfinite(one["bounds"]).any() and len(one["sr"][2]) > 0
    for threads in (2, 0, 64):
        _same(_results(topo, s, t, prices, threads), one)


def test_default_budget(batch):
    """threads=0 takes the process's budget: set_default_threads(1) runs the same calls on
    one thread and changes nothing; the setting is checked and restored."""
    topo, s, t, prices = batch
    assert P.default_threads() == P.available_cpus() == _core.hardware_threads() >= 1
    ref = _results(topo, s, t, prices, 0)
    previous = P.set_default_threads(1)
    try:
        assert P.default_threads() == 1
        _same(_results(topo, s, t, prices, 0), ref)
    finally:
        assert P.set_default_threads(previous) == 1
    assert P.default_threads() == P.available_cpus()
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(UsageError, match="thread count"):
            P.set_default_threads(bad)
        with pytest.raises(UsageError, match="thread count"):
            P.path_price_bounds(topo, prices, s, t, threads=bad)


@linux_only
def test_affinity_is_honoured():
    """In a process allowed one CPU the core counts one, shares out one, and starts no thread
    even when a call asks for 8; with every CPU allowed it starts what is asked (sampled from
    /proc/self/task while the call runs with the GIL released)."""
    assert _core.hardware_threads() == len(os.sched_getaffinity(0))
    script = """
        import os, sys, threading, time
        import networkx as nx
        import numpy as np
        import tpcstudy, tpcstudy._core as core
        from tpcstudy import paths as P
        from tpcstudy.study.executors import worker_threads

        if sys.argv[1] == "one":
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        # the counts under test, not the machine's load (free_cpus has its own test)
        core.set_load_aware(False)
        print(core.hardware_threads(), P.available_cpus(), P.default_threads(), worker_threads(2))
        n = 400
        topo = tpcstudy.read_topology(nx.cycle_graph(n))
        rng = np.random.default_rng(0)
        costs = rng.uniform(1.0, 2.0, (n, n))
        np.fill_diagonal(costs, 0.0)
        s = np.arange(n, dtype=np.int32)
        t = ((s + 1) % n).astype(np.int32)

        def extra_threads(threads):
            # the most threads alive while the call runs, beyond those before it
            peak, started, stop = [0], threading.Event(), threading.Event()
            def watch():
                started.set()
                while not stop.is_set():
                    peak[0] = max(peak[0], len(os.listdir("/proc/self/task")))
                    time.sleep(0.0002)
            w = threading.Thread(target=watch)
            w.start()
            started.wait()
            base = len(os.listdir("/proc/self/task"))
            t0 = time.perf_counter()
            P.best_sr_paths(topo, costs, s, t, 8, threads=threads)
            seconds = time.perf_counter() - t0
            stop.set()
            w.join()
            return peak[0] - base, seconds

        for threads in (8, 2, 1):
            print(threads, *extra_threads(threads))
    """
    r = _run(script.replace("sys.argv[1]", "'one'"))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [x.split() for x in r.stdout.splitlines()]
    assert lines[0] == ["1", "1", "1", "1"]
    for threads, extra, seconds in lines[1:]:
        assert int(extra) == 0, (threads, seconds)  # the calling thread did all the work
    cpus = len(os.sched_getaffinity(0))
    if cpus >= 2:
        r = _run(script.replace("sys.argv[1]", "'all'"))
        assert r.returncode == 0, r.stderr[-3000:]
        lines = [x.split() for x in r.stdout.splitlines()]
        assert lines[0] == [str(cpus), str(cpus), str(cpus), str(max(1, cpus // 2))]
        extra = {int(a): int(b) for a, b, _ in lines[1:]}
        # the caller is one of the threads; 25 source blocks leave enough for 8
        assert extra == {8: min(8, cpus) - 1, 2: 1, 1: 0}, r.stdout


def test_pool_workers_share_the_cpus():
    """A worker of a pool of N runs its core calls on max(1, cpus // N) threads."""
    cpus = P.available_cpus()
    assert worker_threads(1) == cpus and worker_threads(cpus + 5) == 1
    assert worker_threads(2) == max(1, cpus // 2)
    ex = ProcessExecutor(2)
    try:
        assert ex.threads == worker_threads(2)
        assert ex.submit(P.default_threads).result(timeout=60) == worker_threads(2)
    finally:
        ex.shutdown(cancel=True)


# ----------------------------------------------------------------- waypoint recovery
def test_negative_cost_keeps_waypoints_in_range():
    """The last layer's minimum never takes the source as a waypoint, as the recovery never
    does: with D_2(s, s) < 0 (a negative segment cost back into s) the minimum used to come from
    w = s alone, the recovery found no waypoint and returned w = n, no router at all."""
    topo = tpcstudy.read_topology(nx.path_graph(3))
    costs = np.array([[0.0, 1.0, 5.0],
                      [-10.0, 0.0, 100.0],
                      [100.0, 100.0, 0.0]])
    values, offsets, waypoints = P.best_sr_paths(topo, costs, np.array([0]), np.array([2]), 3)
    # s -> t directly (5); s -> 1 -> t costs 101; waypoints other than s cannot do better
    assert values.tolist() == [5.0] and offsets.tolist() == [0, 0] and waypoints.size == 0


@pytest.mark.parametrize("seed", range(5))
def test_recovered_waypoints_give_the_value(seed):
    """Random costs, some negative: every waypoint is a router other than the source, and the
    segments of the recovered path add up to the DP's value (the recovery reproduces the DP)."""
    n = 30
    topo = tpcstudy.read_topology(nx.cycle_graph(n))
    rng = np.random.default_rng(seed)
    costs = rng.uniform(-1.0, 10.0, (n, n))
    np.fill_diagonal(costs, 0.0)
    s, t = np.array([(u, v) for u in range(n) for v in range(n) if u != v], np.int32).T
    values, offsets, waypoints = P.best_sr_paths(topo, costs, s, t, 4, threads=2)
    assert ((waypoints >= 0) & (waypoints < n)).all()
    used = 0
    for i in range(len(s)):
        wps = waypoints[offsets[i]:offsets[i + 1]].tolist()
        assert len(wps) <= 3 and int(s[i]) not in wps
        seq = [int(s[i]), *wps, int(t[i])]
        used += bool(wps)
        assert sum(costs[a, b] for a, b in zip(seq[:-1], seq[1:])) == pytest.approx(values[i])
    assert used > 0
