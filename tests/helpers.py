"""Helpers shared by the tests (the fixtures built on them are in conftest.py).

- where the data sets are, found the way the product finds them (:func:`installed_dataset`);
- small topologies and path records (:func:`ring5`, :func:`path_record`);
- study outputs written by hand (:func:`make_maxflow`, :func:`make_disjoint`, :func:`make_stats`)
  and figure checks (:func:`figure_texts`, :func:`assert_valid_figures`);
- synthetic study tasks (:func:`square_task`, ...): module-level, so worker processes can
  import them by name;
- fuzzing helpers (:func:`mutated`, :func:`deadline`, :data:`FUZZ_SETTINGS`);
- polling with a deadline where the kernel acts asynchronously (:func:`wait_until`,
  :func:`listening`);
- a small column-generation LP family (:func:`cg_instance`, :func:`column_generation`): every LP
  backend must reach the same optimum on it, and ``benchmarks/lp.py`` times HiGHS on it.
"""

from __future__ import annotations

import csv
import functools
import http.server
import ipaddress
import json
import os
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import tpcstudy
from tpcstudy.export import PathRecord
from tpcstudy.io import Dataset
from tpcstudy.lp import LPModel
from tpcstudy.study import ResultStore, Task, run_tasks
from tpcstudy.study.maxflow import COLUMNS as MAXFLOW_COLUMNS
from tpcstudy.study.stats import STATS_COLUMNS

TESTS = Path(__file__).resolve().parent
PNG = b"\x89PNG\r\n\x1a\n"


# ----------------------------------------------------------------------------- data sets
def installed_dataset(dataset: Dataset) -> Path:
    """The installed data set, as the product finds it: already installed under TPCSTUDY_DATA,
    else installed now from the mirror its variable names (TPCSTUDY_ZOO_MIRROR,
    TPCSTUDY_REPETITA_MIRROR), as a first ``--topo`` use would. Skips when there is neither
    (no test reaches for the network)."""
    if dataset.installed():
        return dataset.folder
    if not os.environ.get(dataset.mirror_env):
        pytest.skip(f"{dataset.title} not installed and {dataset.mirror_env} not set: run "
                    f"`tpcstudy data fetch {dataset.name}` or set {dataset.mirror_env}")
    return dataset.fetch()


def mirror_folder(dataset: Dataset) -> Optional[Path]:
    """The local mirror folder named by the data set's variable, if it is one."""
    text = os.environ.get(dataset.mirror_env)
    return Path(text) if text and Path(text).is_dir() else None


@contextmanager
def serve_folder(root: Path) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving ``root``; yields its base URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# ----------------------------------------------------------------------------- topologies
def gml_file(tmp_path: Path, body: str, name: str = "t.gml") -> Path:
    """A GML file ``graph [ BODY ]`` in ``tmp_path``."""
    p = tmp_path / name
    p.write_text("graph [\n" + body + "]\n", encoding="utf-8")
    return p


def path_record(segs, bw=0.0, delay=0.0):
    segs = [ipaddress.IPv6Address(s) for s in segs]
    return PathRecord(nodes=[], segments=segs, waypoints=[str(s) for s in segs], bw_mbps=bw,
                        delay_ms=delay, igp_cost=0.0)


def ring5(order=None, *, name="ring5"):
    """s - a - t - c - b - s with capacities (bit/s) and delays (ms)."""
    links = [("s", "a", 10e9, 1.0), ("a", "t", 1e9, 2.0), ("t", "c", 100e6, 3.0),
             ("c", "b", 40e9, 4.0), ("b", "s", 2.5e9, 5.0)]
    g = nx.Graph()
    g.add_nodes_from(order or ["s", "a", "t", "b", "c"])
    for u, v, cap, d in (links if order is None else links[::-1]):
        g.add_edge(u, v, capacity=cap, delay=d)
    return tpcstudy.read_topology(g, capacity="zoo", name=name)


# ----------------------------------------------------------------------------- study outputs
def write_rows(path: Path, columns: Sequence[str], rows: List[Dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in columns})


def read_rows(path: Path) -> List[Dict[str, str]]:
    """The rows of a CSV file (results.csv) as dicts of strings."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def study_meta(config: Dict[str, Any], seeds: Any = None) -> Dict[str, Any]:
    return {"study": {"config": config, "seeds": seeds, "solver": "highs"},
            "tpcstudy": "0.1.0", "git_commit": "0123456789abcdef"}


def make_maxflow(folder: Path, *, meta: bool = True) -> Path:
    """3 topologies x heavy 1, 10 x 2 seeds; ecmp 1, multipath 1.1, sr 1.5/1.6 (k 2/4), mcf 2."""
    rows = []
    for t, scale in (("Alpha", 1.0), ("Beta", 0.5), ("Gamma", 0.2)):
        for heavy in (1.0, 10.0):
            for seed in (0, 1):
                vals = {("ecmp", 1): 1.0, ("multipath", ""): 1 + 0.1 * scale,
                        ("sr", 2): 1 + 0.5 * scale, ("sr", 4): 1 + 0.6 * scale,
                        ("mcf", ""): 1 + 1.0 * scale}
                for (model, k), v in vals.items():
                    rows.append({"topology": t, "heavy": heavy, "seed": seed, "model": model,
                                 "k": k, "pairs": 3, "value": v,
                                 "improvement": round(100 * (v - 1), 6),
                                 "improvement_over_multipath":
                                     round(100 * (v / (1 + 0.1 * scale) - 1), 6)
                                     if model == "sr" else "",
                                 "status": "ok"})
    rows.append({"topology": "Tree", "heavy": 1.0, "seed": 0, "model": "ecmp", "k": 1,
                 "pairs": 0, "status": "skipped", "error": "fewer than 2 edge routers"})
    write_rows(folder / "results.csv", MAXFLOW_COLUMNS, rows)
    if meta:
        (folder / "meta.json").write_text(json.dumps(study_meta(
            {"topo": "zoo", "capacity": "uniform", "weight": "hop", "heavy": [1.0, 10.0],
             "models": ["ecmp", "multipath", "sr", "mcf"], "k": [2, 4], "demands": None},
            seeds=[0, 1])))
    return folder


DJ_COLUMNS = ["topology", "method", "k", "nodes", "links", "edge_routers", "pairs",
              "mean_paths", "min_paths", "max_paths", "survive_share", "overlap_share",
              "backup_share", "seconds", "status", "error"]


def make_disjoint(folder: Path) -> Path:
    """Alpha: greedy = max = 2; Beta: greedy 1.5 < max 2; sps grows with k."""
    rows = []
    for t, mx, gr in (("Alpha", 2.0, 2.0), ("Beta", 2.0, 1.5)):
        rows.append({"topology": t, "method": "max", "mean_paths": mx, "status": "ok"})
        rows.append({"topology": t, "method": "greedy", "mean_paths": gr, "status": "ok"})
        for k in (1, 2, 3):
            rows.append({"topology": t, "method": "sps", "k": k,
                         "mean_paths": min(1 + 0.4 * (k - 1), mx), "status": "ok"})
        rows.append({"topology": t, "method": "failure", "k": 4, "mean_paths": 1.5,
                     "status": "ok"})
    rows.append({"topology": "Tree", "method": "", "status": "skipped", "error": "tree"})
    write_rows(folder / "results.csv", DJ_COLUMNS, rows)
    (folder / "meta.json").write_text(json.dumps(study_meta(
        {"study": "disjoint", "topo": "zoo", "capacity_rule": "uniform", "weight_rule": "hop",
         "pairs": "edge", "k": [1, 2, 3]})))
    return folder


def make_stats(path: Path) -> Path:
    rows = [{"name": f"T{i}", "source": "", "nodes": 5 + i, "links": 6 + i, "pruned_nodes": n,
             "pruned_links": n + 2, "edge_routers": 2} for i, n in enumerate((0, 4, 8, 16, 30))]
    write_rows(path, STATS_COLUMNS, rows)
    return path


def figure_texts(fig: Any) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle else ""]
    parts.append(fig._supxlabel.get_text() if fig._supxlabel else "")
    for a in fig.axes:
        parts += [a.get_title(), a.get_xlabel(), a.get_ylabel()]
        parts += [t.get_text() for t in a.get_xticklabels()]
        parts += [t.get_text() for t in a.texts]
        leg = a.get_legend()
        if leg:
            parts += [t.get_text() for t in leg.get_texts()]
    return "\n".join(parts)


def assert_valid_figures(paths: Sequence[Path]) -> None:
    for p in paths:
        data = Path(p).read_bytes()
        assert len(data) > 1000
        if str(p).endswith(".png"):
            assert data.startswith(PNG)
        else:
            assert data.startswith(b"%PDF") and b"%%EOF" in data[-64:]


# ----------------------------------------------------------------------------- study tasks
TASK_COLUMNS = ["topology", "seed", "value", "note"]
TASK_KEY = ["topology", "seed"]
CALLS: List[str] = []  # tasks run in this process (jobs=1)


def square_task(task: Task) -> List[Dict[str, Any]]:
    """Two rows per task; deterministic; raises for topology 'bad'."""
    CALLS.append(task.id)
    name = task.key["topology"]
    if name == "bad":
        raise ValueError(f"cannot handle {name}")
    n = int(task.args)
    return [{"topology": name, "seed": s, "value": n * n + s / 3, "note": f"a,\"b\"\n{n}"}
            for s in (1, 0)]


def sleepy_task(task: Task) -> List[Dict[str, Any]]:
    """square_task, slowly (the kill test)."""
    time.sleep(0.03)
    return square_task(task)


def killer_task(task: Task) -> List[Dict[str, Any]]:
    """square_task, except that topology 'boom' kills its own process (as the OOM killer
    would) after the others had time to start."""
    if task.key["topology"] == "boom":
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.1)
    return square_task(task)


def bad_rows_task(task: Task) -> List[Dict[str, Any]]:
    return [{"topology": "x", "nope": 1}]


def run_numbered(out: Path, jobs: int = 1, tasks: Optional[List[Task]] = None,
                 fn: Any = square_task, **kw: Any) -> Any:
    """Run :func:`numbered_tasks` (or ``tasks``) into a store in ``out``."""
    store = ResultStore(out, TASK_COLUMNS, TASK_KEY)
    return run_tasks(tasks if tasks is not None else numbered_tasks(), fn, store, jobs=jobs,
                     desc="test", progress=False, **kw)


def numbered_tasks(n: int = 8, bad: bool = False) -> List[Task]:
    tasks = [Task({"topology": f"T{i:02d}"}, args=i) for i in range(n)]
    if bad:
        tasks.insert(3, Task({"topology": "bad"}, args=0))
    return tasks


# ----------------------------------------------------------------------------- fuzzing
@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise TimeoutError after ``seconds`` (SIGALRM): a reader that hangs fails its test."""
    def boom(*_: Any) -> None:
        raise TimeoutError("reader hung")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def wait_until(check: Any, timeout: float, what: str, every: float = 0.05) -> Any:
    """Poll ``check()`` until it returns something true (returned) or ``timeout`` seconds pass
    (AssertionError saying ``what`` was awaited): for whatever the kernel or another process
    does asynchronously, instead of a fixed sleep that is too short on a busy machine."""
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(every)


def listening(netns: str, port: int) -> bool:
    """A TCP socket listens on ``port`` in network namespace ``netns`` (its /proc/net/tcp6)."""
    from tpcstudy.emulate.network import kernel as N

    with N.enter(netns):
        with open("/proc/thread-self/net/tcp6") as fh:
            rows = [line.split() for line in fh.read().splitlines()[1:]]
    return any(r[3] == "0A" and int(r[1].rsplit(":", 1)[1], 16) == port for r in rows)


@st.composite
def mutated(draw: Any, base: bytes) -> bytes:
    """``base`` with 1-6 random edits (flips, inserts of tricky tokens, cuts, duplicates)."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "dup"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from([b"[", b"]", b'"', b"-", b"1e999", b"nan", b"\xff",
                                                  b"node [ id 0 ]", b"<", b"</graph>", b"\n", b" 7 ",
                                                  b"&#0;", b"-5", b"0.0"]))
        elif op == "delete" and data:
            del data[pos: pos + draw(st.integers(1, 20))]
        elif op == "truncate":
            del data[pos:]
        elif op == "dup" and data:
            end = min(len(data), pos + draw(st.integers(1, 40)))
            data[pos:pos] = data[pos:end]
    return bytes(data)


# Reproducible in CI (derandomized, 150 examples each); a longer random campaign:
#   TPCSTUDY_FUZZ_RANDOM=1 TPCSTUDY_FUZZ_EXAMPLES=5000 pytest tests/io/test_fuzz.py tests/export/test_fuzz.py
FUZZ_SETTINGS = settings(max_examples=int(os.environ.get("TPCSTUDY_FUZZ_EXAMPLES", "150")),
                         derandomize=not os.environ.get("TPCSTUDY_FUZZ_RANDOM"), deadline=None,
                         suppress_health_check=[HealthCheck.function_scoped_fixture])


# ----------------------------------------------------------------------------- LP instances
@dataclass
class CGInstance:
    """A column-generation test instance: 2-segment SR paths on a random graph.

    ``arc_cap[l]`` are the row uppers; ``path_arcs(u, v)`` the arcs of the shortest
    ``u -> v`` path; pairs ``(s, t)`` are priced over ``s -> w -> t`` for every ``w``.
    """

    n: int
    arc_cap: np.ndarray
    sp_offsets: np.ndarray  # CSR over u * n + v
    sp_arcs: np.ndarray
    pairs: np.ndarray  # (P, 2)
    extra: Dict[str, Any] = field(default_factory=dict)

    def path_arcs(self, u: int, v: int) -> np.ndarray:
        k = u * self.n + v
        return self.sp_arcs[self.sp_offsets[k]:self.sp_offsets[k + 1]]


def cg_instance(n: int = 60, degree: int = 4, pair_fraction: float = 0.3,
                seed: int = 0) -> CGInstance:
    """Build a reproducible :class:`CGInstance` (a connected random graph, hop shortest paths).

    Parameters
    ----------
    n, degree
        Nodes and (approximate) degree of a connected Watts-Strogatz graph.
    pair_fraction
        Fraction of the ``n (n - 1)`` ordered pairs used as commodities.
    seed
        Seed of the graph, the capacities and the pairs.
    """
    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(n, degree, 0.3, seed=seed)
    arcs = sorted(g.edges()) + sorted((v, u) for u, v in g.edges())
    arc_id = {a: i for i, a in enumerate(arcs)}
    cap = rng.choice([1.0, 2.5, 10.0], size=len(arcs))
    offsets = [0]
    flat: list = []
    for u in range(n):
        pred = nx.predecessor(g, u)
        for v in range(n):
            path = []
            w = v
            while w != u and pred[w]:
                p = min(pred[w])  # deterministic tie-break
                path.append(arc_id[(p, w)])
                w = p
            flat.extend(reversed(path))
            offsets.append(len(flat))
    all_pairs = np.array([(s, t) for s in range(n) for t in range(n) if s != t])
    m = max(1, int(np.ceil(pair_fraction * len(all_pairs))))
    pairs = all_pairs[np.sort(rng.choice(len(all_pairs), m, replace=False))]
    return CGInstance(n, cap, np.array(offsets, dtype=np.int64), np.array(flat, dtype=np.int64),
                      pairs)


def column_generation(inst: CGInstance, model: LPModel, *, batch: int = 1,
                      max_rounds: int = 1000) -> Dict[str, Any]:
    """Solve the max-flow LP of ``inst`` over 2-segment SR paths by column generation.

    A path ``s -> w -> t`` uses arc ``l`` ``r(l, p)`` times (0, 1 or 2), so its reduced cost
    ``1 - cost[s, w] - cost[w, t]`` is exact and the result is the LP optimum over all
    2-segment paths (a backend-independent number).

    Returns a dict with ``objective``, ``rounds``, ``columns``, ``solve_seconds`` (sum over
    the solves; ``first_seconds`` + ``resolve_seconds``) and ``status``. ``batch`` columns are
    added per improving pair and round.
    """
    n = inst.n
    off, arcs = inst.sp_offsets, inst.sp_arcs
    model.add_rows(inst.arc_cap)

    def add(paths: list) -> None:
        cols = [np.unique(np.concatenate([inst.path_arcs(s, w), inst.path_arcs(w, t)]),
                          return_counts=True) for s, w, t in paths]
        starts = np.concatenate([[0], np.cumsum([r.size for r, _ in cols])])
        model.add_columns(np.ones(len(cols)), starts, np.concatenate([r for r, _ in cols]),
                          np.concatenate([c for _, c in cols]).astype(np.float64))

    add([(s, s, t) for s, t in inst.pairs])
    rounds = 0
    res = model.solve()
    times = [res.seconds]
    lens = np.diff(off)
    while res.ok and rounds < max_rounds:
        rounds += 1
        y = res.duals
        # cost[u, v] = sum of duals over the (unique-arc) shortest path u -> v
        seg = np.zeros(off.size - 1)
        nz = lens > 0
        seg[nz] = np.add.reduceat(y[arcs], off[:-1][nz])
        cost = seg.reshape(n, n)
        new = []
        for s, t in inst.pairs:
            via = cost[s, :] + cost[:, t]  # exact: r(l, p) counts repeated arcs
            for w in np.argsort(via, kind="stable")[:batch]:
                if via[w] < 1 - 1e-9:
                    new.append((int(s), int(w), int(t)))
        if not new:
            break
        add(new)
        res = model.solve()
        times.append(res.seconds)
    return {"objective": res.objective, "status": res.status, "rounds": rounds,
            "columns": model.num_cols, "solve_seconds": float(sum(times)),
            "first_seconds": times[0], "resolve_seconds": float(sum(times[1:]))}
