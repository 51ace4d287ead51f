"""Figures of seed 000, sections 3.2-3.4: ``tpcstudy plot`` and the functions notebooks call.

- **Figure 5** (:func:`plot_topologies`): CDFs of the number of routers (a) and links (b) of the
  pruned topologies, and (c) the share of a topology's routers that have a given degree.
- **Figure 6** (:func:`plot_maxflow`): boxplots over topologies of the max-flow improvement per
  heavy-hitter fraction: (a) ``multipath``, ``sr`` and the ``mcf`` bound over single-path ECMP,
  (b) ``sr`` over ``multipath``; (c) ``sr`` by segment limit when the study has several ``k``.
- **Figure 7** (:func:`plot_disjoint`): (a) CDF over topologies of the mean number of link-disjoint
  paths per edge-router pair, ``max`` vs ``greedy``; (b) the same for ``sps`` with each ``k``;
  (c) how close ``greedy`` comes to ``max``.

Inputs are what the studies write (:func:`load_results` reads any of them and tells them apart):
a ``tpcstudy topo stats --out`` CSV or ``--json`` output, and ``maxflow`` / ``disjoint`` result
folders (``meta.json`` + ``results.csv``). Statistics over topologies weigh every topology once;
seeds of the same topology are averaged first. Seed 000's published values are drawn as red
markers where the paper gives a number (study-method.md §4-5); they are never tuned to.

Figures are plain :class:`matplotlib.figure.Figure` objects drawn with the Agg canvas: no
``pyplot`` state, no screen. :func:`save_figure` writes PNG and PDF atomically.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import (Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union)

from .errors import TpcStudyError, UsageError

__all__ = [
    "Results", "load_results", "topo_stats", "collect_topologies",
    "plot_topologies", "plot_maxflow", "plot_disjoint", "plot_path_table", "plot_results", "save_figure",
    "maxflow_table", "disjoint_table", "topology_table", "greedy_reaches_max", "summary_line",
    "PAPER_MAXFLOW_MEDIANS", "PAPER_GREEDY_REACHES_MAX", "register_cli",
]

# The paper's figures, kept once, beside the studies that print them.
from .disjoint_study import PAPER_GREEDY_REACHES_MAX  # noqa: E402
from .maxflow_study import PAPER_MEDIANS as PAPER_MAXFLOW_MEDIANS  # noqa: E402
from .maxflow_study import PAPER_MULTIPATH_GAP  # noqa: E402

KINDS = ("topo", "maxflow", "disjoint")
_STRING_COLUMNS = {"topology", "name", "source", "model", "method", "status", "error",
                   "capacity_rule", "weight_rule"}
_MAX_DEGREE_BIN = 8  # 5c: degrees 2..7, then ">= 8"

_COLORS = {"ecmp": "#7f7f7f", "multipath": "#1f77b4", "sr": "#2ca02c", "mcf": "#9467bd",
           "max": "#000000", "greedy": "#ff7f0e", "paper": "#d62728"}


# --------------------------------------------------------------------------- results
class Results(list):  # type: ignore[type-arg]
    """Rows of one study output (a list of dicts, numbers already converted) and where they came
    from.

    Attributes
    ----------
    kind
        ``"topo"`` (topology statistics), ``"maxflow"`` or ``"disjoint"``.
    meta
        The folder's ``meta.json`` (empty dict when there is none).
    source
        The file or folder read (or the ``--topo`` spec for statistics computed on the fly).
    """

    def __init__(self, rows: Iterable[Dict[str, Any]] = (), kind: str = "topo",
                 meta: Optional[Dict[str, Any]] = None, source: str = "") -> None:
        super().__init__(rows)
        if kind not in KINDS:
            raise UsageError(f"unknown result kind {kind!r}; choose from {', '.join(KINDS)}")
        self.kind = kind
        self.meta = dict(meta or {})
        self.source = str(source)

    @property
    def config(self) -> Dict[str, Any]:
        """The study settings recorded in ``meta.json`` (``study.config``), or ``{}``."""
        return dict((self.meta.get("study") or {}).get("config") or {})

    @property
    def seeds(self) -> List[Any]:
        return list((self.meta.get("study") or {}).get("seeds") or [])

    @property
    def label(self) -> str:
        """A short name for file names: the folder (or file stem) name."""
        p = Path(self.source)
        name = p.stem if p.suffix in (".csv", ".json") else p.name
        return "".join(c if c.isalnum() or c in "-_." else "-" for c in name) or self.kind

    def __repr__(self) -> str:
        return f"Results(kind={self.kind!r}, rows={len(self)}, source={self.source!r})"


def _convert(col: str, value: Any) -> Any:
    if col in _STRING_COLUMNS or not isinstance(value, str):
        return value
    if value == "":
        return None
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def _read_csv(path: Path) -> Tuple[List[str], List[Dict[str, Any]]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows = [{k: _convert(k, v) for k, v in r.items()} for r in reader]
            return list(reader.fieldnames or []), rows
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"{path}: cannot read as CSV ({exc})") from exc


def _kind_of(columns: Iterable[str], meta: Mapping[str, Any]) -> Optional[str]:
    config = (meta.get("study") or {}).get("config") or {}
    if config.get("study") == "disjoint":
        return "disjoint"
    if "models" in config:
        return "maxflow"
    cols = set(columns)
    if {"model", "improvement"} <= cols:
        return "maxflow"
    if {"method", "mean_paths"} <= cols:
        return "disjoint"
    if {"pruned_nodes", "pruned_links"} <= cols:
        return "topo"
    return None


def _read_meta(folder: Path) -> Dict[str, Any]:
    path = folder / "meta.json"
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable meta.json ({exc})") from exc


def load_results(path: Union[str, Path]) -> Results:
    """Read one study output and tell what it is.

    Parameters
    ----------
    path
        A result folder (``meta.json`` + ``results.csv`` of ``tpcstudy maxflow`` or ``tpcstudy
        disjoint``), a ``results.csv``, a ``tpcstudy topo stats --out`` CSV or ``--json`` output,
        or a folder holding such a statistics file.

    Returns
    -------
    Results
        The rows (numbers as int/float, empty cells as ``None``), ``kind``, ``meta``, ``source``.

    Raises
    ------
    UsageError
        ``path`` does not exist or is not one of the above (the message says what was found).
    """
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such file or folder")
    if p.is_dir():
        results = p / "results.csv"
        if results.exists():
            return _load_csv(results, _read_meta(p), source=p)
        if (p / "meta.json").exists():
            raise UsageError(f"{p}: has meta.json but no results.csv (a study still running, or "
                             "killed before its first topology finished?)")
        stats = [q for q in sorted(p.glob("*.csv")) + sorted(p.glob("*.json"))
                 if _sniff_stats(q)]
        if len(stats) == 1:
            return load_results(stats[0])
        if len(stats) > 1:
            raise UsageError(f"{p}: several topology statistics files "
                             f"({', '.join(q.name for q in stats)}); name one")
        raise UsageError(f"{p}: not a result folder (no results.csv and meta.json of a "
                         "maxflow/disjoint study, no 'tpcstudy topo stats' CSV or JSON)")
    if p.suffix.lower() == ".json":
        if p.name == "meta.json":
            return load_results(p.parent)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{p}: not JSON ({exc})") from exc
        if isinstance(data, dict) and isinstance(data.get("topologies"), list):
            return Results(data["topologies"], "topo", {"summary": data.get("summary")},
                           source=str(p))
        raise UsageError(f"{p}: not the JSON of 'tpcstudy topo stats --json' (no 'topologies')")
    meta = _read_meta(p.parent) if p.name == "results.csv" else {}
    return _load_csv(p, meta, source=p.parent if p.name == "results.csv" else p)


def _sniff_stats(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    if path.suffix == ".json":
        return '"topologies"' in head and '"pruned_nodes"' in head
    first = head.splitlines()[0] if head else ""
    return "pruned_nodes" in first.split(",")


def _load_csv(path: Path, meta: Dict[str, Any], source: Path) -> Results:
    columns, rows = _read_csv(path)
    kind = _kind_of(columns, meta)
    if kind is None:
        raise UsageError(f"{path}: not a tpcstudy result (columns {', '.join(columns[:8])}...: "
                         "expected a maxflow or disjoint results.csv or a topo stats CSV)")
    return Results(rows, kind, meta, source=str(source))


def topo_stats(spec: Union[str, Sequence[str]], *, capacity: str = "uniform",
               weight: str = "hop") -> Results:
    """Topology statistics (``tpcstudy topo stats`` records, with ``degree_histogram``) computed
    now for a ``--topo`` spec or a list of specs (e.g. ``["zoo/Abilene", "zoo/Geant2012"]``)."""
    from .io import read_topology, topology_files
    from .stats import topology_stats

    specs = [spec] if isinstance(spec, (str, Path)) else list(spec)
    records = []
    for s in specs:
        for path in topology_files(s):
            records.append(topology_stats(read_topology(path, capacity=capacity, weight=weight)))
    label = specs[0] if len(specs) == 1 else f"{len(specs)} specs"
    return Results(records, "topo", {"study": {"config": {"topo": str(label), "capacity": capacity,
                                                          "weight": weight}}},
                   source=str(label).replace("/", "-"))


def collect_topologies(specs: Union[str, Sequence[str]], folder: Union[str, Path]) -> str:
    """A ``--topo`` value for several specs: a string spec is returned as is; for a list (e.g.
    ``["zoo/Abilene", "zoo/Geant2012"]``) their files are linked (or copied) into ``folder``,
    whose path is returned. Lets a notebook run a study on a few Zoo topologies."""
    import os
    import shutil

    from .io import topology_files

    if isinstance(specs, (str, Path)):
        return str(specs)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for s in specs:
        for f in topology_files(s):
            target = out / f.name
            if target.exists() or target.is_symlink():
                continue
            try:
                os.symlink(f.resolve(), target)
            except OSError:
                shutil.copyfile(f, target)
    return str(out)


def _fill_degree_histograms(records: List[Dict[str, Any]]) -> int:
    """Add ``degree_histogram`` to CSV records (the CSV has none) by re-reading their source
    files when they still exist; returns how many records still lack one."""
    from .io import read_topology
    from .topology import prune

    missing = 0
    for r in records:
        if r.get("degree_histogram") is not None or not (r.get("pruned_nodes") or 0):
            continue
        src = r.get("source") or ""
        try:
            if not src or not Path(src).is_file():
                raise FileNotFoundError(src)
            p = prune(read_topology(src))
        except (OSError, TpcStudyError):
            missing += 1
            continue
        hist = [0] * (int(p.degree.max()) + 1 if p.num_nodes else 0)
        for d in p.degree.tolist():
            hist[int(d)] += 1
        r["degree_histogram"] = hist
    return missing


# --------------------------------------------------------------------------- tables
def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def _quartiles(values: Sequence[float]) -> Tuple[float, float, float]:
    import numpy as np

    if not values:
        return (math.nan,) * 3  # type: ignore[return-value]
    q = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q[0]), float(q[1]), float(q[2])


def _ok(r: Mapping[str, Any]) -> bool:
    return (r.get("status") or "ok") == "ok"


def _num(x: Any) -> Optional[float]:
    if x is None or x == "":
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def topology_table(records: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Figure 5's numbers: pruned sizes of the non-empty topologies and degree shares."""
    usable = [r for r in records if (r.get("pruned_nodes") or 0) > 0]
    nodes = sorted(int(r["pruned_nodes"]) for r in usable)
    links = sorted(int(r["pruned_links"]) for r in usable)
    shares: Dict[int, List[float]] = defaultdict(list)  # degree bin -> per-topology share (%)
    pooled: Dict[int, int] = defaultdict(int)
    with_hist = 0
    for r in usable:
        hist = r.get("degree_histogram")
        if not hist:
            continue
        with_hist += 1
        total = sum(hist)
        binned: Dict[int, int] = defaultdict(int)
        for d, c in enumerate(hist):
            if c:
                binned[min(d, _MAX_DEGREE_BIN)] += c
        for b in range(2, _MAX_DEGREE_BIN + 1):
            shares[b].append(100.0 * binned.get(b, 0) / total)
            pooled[b] += binned.get(b, 0)
    pooled_total = sum(pooled.values())
    return {
        "topologies": len(records), "nonempty": len(usable), "nodes": nodes, "links": links,
        "median_nodes": statistics.median(nodes) if nodes else math.nan,
        "median_links": statistics.median(links) if links else math.nan,
        "largest": max(usable, key=lambda r: r["pruned_nodes"])["name"] if usable else None,
        "degree_bins": list(range(2, _MAX_DEGREE_BIN + 1)),
        "degree_shares": {b: shares[b] for b in range(2, _MAX_DEGREE_BIN + 1)},
        "degree_pooled": {b: (100.0 * pooled[b] / pooled_total if pooled_total else math.nan)
                          for b in range(2, _MAX_DEGREE_BIN + 1)},
        "with_histogram": with_hist,
    }


def _ks(rows: Sequence[Mapping[str, Any]]) -> List[int]:
    return sorted({int(r["k"]) for r in rows if r.get("model") == "sr" and r.get("k") is not None})


def _default_k(rows: Sequence[Mapping[str, Any]]) -> Optional[int]:
    ks = _ks(rows)
    if not ks:
        return None
    return 4 if 4 in ks else max(ks)


def maxflow_table(rows: Sequence[Mapping[str, Any]], *, k: Optional[int] = None
                  ) -> Dict[Tuple[str, float], Dict[str, float]]:
    """Per-topology improvements (seeds averaged) for Figure 6.

    Returns ``{(series, heavy): {topology: improvement %}}`` with series ``multipath``, ``mcf``,
    ``sr`` (segment limit ``k``, default 4 or the largest present) over ecmp, ``sr/multipath``
    (sr over multipath) and ``sr k=<j>`` for every limit present.
    """
    k = _default_k(rows) if k is None else int(k)
    acc: Dict[Tuple[str, float], Dict[str, List[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if not _ok(r):
            continue
        heavy = _num(r.get("heavy"))
        model = r.get("model")
        imp = _num(r.get("improvement"))
        if heavy is None:
            continue
        topo = str(r.get("topology"))
        if model in ("multipath", "mcf") and imp is not None:
            acc[(str(model), heavy)][topo].append(imp)
        elif model == "sr" and r.get("k") is not None:
            rk = int(r["k"])
            if imp is not None:
                acc[(f"sr k={rk}", heavy)][topo].append(imp)
                if rk == k:
                    acc[("sr", heavy)][topo].append(imp)
            over = _num(r.get("improvement_over_multipath"))
            if over is not None and rk == k:
                acc[("sr/multipath", heavy)][topo].append(over)
    return {key: {t: _mean(v) for t, v in per.items()} for key, per in acc.items()}


def disjoint_table(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Dict[str, float]]:
    """Mean paths per pair, per topology, for Figure 7: ``{"max"|"greedy"|"sps k=<j>": {topology:
    mean_paths}}`` (ok rows only; ``failure`` rows are left out)."""
    out: Dict[str, Dict[str, float]] = defaultdict(dict)
    for r in rows:
        if not _ok(r) or r.get("method") in (None, "", "failure"):
            continue
        v = _num(r.get("mean_paths"))
        if v is None:
            continue
        name = str(r["method"]) if r["method"] != "sps" else f"sps k={int(r['k'])}"
        out[name][str(r["topology"])] = v
    return dict(out)


# --------------------------------------------------------------------------- drawing helpers
def _new_figure(n: int, *, width: float = 5.0, height: float = 4.0) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * n, height), layout="constrained")
    FigureCanvasAgg(fig)
    fig.subplots(1, n)
    return fig


def _axes_for(ax: Any, n: int, **kw: Any) -> Tuple[Any, List[Any]]:
    """(figure, list of n axes): new ones, or the caller's ``ax`` (one Axes or a sequence)."""
    if ax is None:
        fig = _new_figure(n, **kw)
        return fig, list(fig.axes)
    from matplotlib.axes import Axes

    axes = [ax] if isinstance(ax, Axes) else list(getattr(ax, "flat", ax))
    if len(axes) != n:
        raise UsageError(f"{n} panel(s) to draw but {len(axes)} axes given")
    return axes[0].figure, axes


def _cdf(ax: Any, values: Sequence[float], **kw: Any) -> None:
    xs = sorted(values)
    n = len(xs)
    if not n:
        return
    ys = [(i + 1) / n for i in range(n)]
    ax.step([xs[0]] + xs, [0.0] + ys, where="post", **kw)


def _caption(fig: Any, text: str) -> None:
    """The configuration under the figure, wrapped to its width (about 14 characters of 8 pt
    text per inch)."""
    import textwrap

    if text:
        width = max(40, int(fig.get_figwidth() * 14))
        fig.supxlabel("\n".join(textwrap.wrap(text, width)), fontsize=8, color="#444444")


def _source_name(results: Any) -> str:
    topo = ""
    if isinstance(results, Results):
        topo = str(results.config.get("topo") or "")
    if topo == "zoo":
        return "Topology Zoo"
    if topo.startswith("zoo/"):
        return f"Topology Zoo {topo[4:]}"
    if topo:
        name = Path(topo).name
        return f"REPETITA {name}" if "repetita" in topo.lower() else name
    return ""


def _rule(value: Any, what: str) -> str:
    if value in (None, ""):
        return ""
    v = str(value).split(":")[0]
    if v == "file":
        return f"{what} from the topology files"
    return f"{what} {v}"


def _fmt_list(values: Iterable[Any], unit: str = "") -> str:
    return ", ".join(f"{float(v):g}" if isinstance(v, (int, float)) else str(v)
                     for v in values) + unit


def _config_caption(results: Any, *, kind: str, n_topos: int, k: Optional[int] = None,
                    extra: str = "") -> str:
    cfg = results.config if isinstance(results, Results) else {}
    parts = []
    src = _source_name(results)
    parts.append(f"{src + ': ' if src else ''}{n_topos} topologies")
    cap = _rule(cfg.get("capacity", cfg.get("capacity_rule")), "capacities")
    wei = _rule(cfg.get("weight", cfg.get("weight_rule")), "IGP weights")
    parts += [x for x in (cap, wei) if x]
    if kind == "maxflow":
        if cfg.get("heavy"):
            parts.append(f"heavy hitters {_fmt_list(cfg['heavy'], ' %')} of ordered edge-router "
                         "pairs")
        seeds = results.seeds if isinstance(results, Results) else []
        if seeds:
            parts.append(f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''} per fraction"
                         + (" (averaged per topology)" if len(seeds) > 1 else ""))
        if k is not None:
            parts.append(f"sr k = {k}" + (f" (study: k = {_fmt_list(cfg['k'])})"
                                         if len(cfg.get("k") or []) > 1 else ""))
        if cfg.get("demands"):
            parts.append(f"demands {cfg['demands']}")
    if kind == "disjoint":
        if cfg.get("pairs"):
            parts.append(f"pairs: {cfg['pairs']} routers")
        if cfg.get("k"):
            parts.append(f"sps k = {_fmt_list(cfg['k'])}")
    if extra:
        parts.append(extra)
    meta = results.meta if isinstance(results, Results) else {}
    if meta.get("git_commit"):
        parts.append(f"tpcstudy {meta.get('tpcstudy', '')} @ {str(meta['git_commit'])[:7]}")
    return "; ".join(parts)


# --------------------------------------------------------------------------- Figure 5
TOPOLOGY_PANELS = ("routers", "links", "degree")


def plot_topologies(records: Sequence[Mapping[str, Any]], ax: Any = None, *,
                    panels: Sequence[str] = TOPOLOGY_PANELS, caption: bool = True) -> Any:
    """Figure 5: (a) CDF of routers and (b) of links after pruning, (c) router degrees.

    Parameters
    ----------
    records
        ``tpcstudy topo stats`` records (:func:`load_results` or :func:`topo_stats`). Panel
        ``degree`` needs ``degree_histogram`` (in the JSON and in :func:`topo_stats`; for a CSV
        the topology files named in its ``source`` column are re-read when they exist).
    ax
        ``None`` (a new figure) or one Axes per panel.
    panels
        Any of ``"routers"``, ``"links"``, ``"degree"``, in drawing order.
    caption
        Write the configuration under the figure (only for a new figure).

    Returns
    -------
    matplotlib.figure.Figure
    """
    for p in panels:
        if p not in TOPOLOGY_PANELS:
            raise UsageError(f"unknown panel {p!r}; choose from {', '.join(TOPOLOGY_PANELS)}")
    new = ax is None
    fig, axes = _axes_for(ax, len(panels))
    recs = [dict(r) for r in records]
    if "degree" in panels:
        _fill_degree_histograms(recs)
    t = topology_table(recs)
    letters = "abc"
    for i, (panel, a) in enumerate(zip(panels, axes)):
        tag = f"({letters[TOPOLOGY_PANELS.index(panel)]})"
        if panel in ("routers", "links"):
            vals = t["nodes"] if panel == "routers" else t["links"]
            med = t["median_nodes"] if panel == "routers" else t["median_links"]
            _cdf(a, vals, color="#1f77b4", lw=1.8)
            a.set_xscale("log")
            from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

            ticks = [t for t in (3, 5, 10, 20, 50, 100, 200, 500, 1000)
                     if vals and min(vals) * 0.8 <= t <= max(vals) * 1.25]
            a.xaxis.set_major_locator(FixedLocator(ticks))
            a.xaxis.set_major_formatter(ScalarFormatter())
            a.xaxis.set_minor_formatter(NullFormatter())
            a.axvline(med, color="#7f7f7f", ls=":", lw=1)
            if vals:
                a.annotate(f"median {med:g}\nmax {max(vals)} ({t['largest']})",
                           xy=(med, 0.5), xytext=(8, -30), textcoords="offset points",
                           fontsize=8, color="#333333")
            noun = "routers" if panel == "routers" else "links"
            a.set_xlabel(f"{noun} per topology after pruning (count, log scale)")
            a.set_ylabel("CDF (share of topologies)")
            a.set_ylim(0, 1.02)
            a.set_title(f"{tag} {noun} after pruning")
            a.grid(True, which="major", alpha=0.3)
        else:
            bins = t["degree_bins"]
            data = [t["degree_shares"][b] for b in bins]
            if t["with_histogram"]:
                bp = a.boxplot(data, positions=range(len(bins)), widths=0.6, patch_artist=True,
                               flierprops={"markersize": 2, "alpha": 0.4},
                               medianprops={"color": "black"})
                for box in bp["boxes"]:
                    box.set_facecolor("#aec7e8")
                a.plot(range(len(bins)), [t["degree_pooled"][b] for b in bins], "D",
                       color="#d62728", ms=4, label="all routers pooled")
                a.legend(fontsize=8, loc="upper right")
            else:
                a.text(0.5, 0.5, "no degree histograms\n(use topo stats --json or --topo)",
                       ha="center", va="center", transform=a.transAxes)
            a.set_xticks(range(len(bins)))
            a.set_xticklabels([str(b) if b < _MAX_DEGREE_BIN else f"≥{b}" for b in bins])
            a.set_xlabel("router degree after pruning (attached links)")
            a.set_ylabel("routers with this degree (% of the topology's)")
            a.set_ylim(0, 100)
            a.set_title(f"{tag} degree distribution ({t['with_histogram']} topologies)")
            a.grid(True, axis="y", alpha=0.3)
    if new:
        src = _source_name(records) or (
            "Topology Zoo topologies" if any("topologyzoo" in str(r.get("source", ""))
                                             for r in recs) else "topologies")
        fig.suptitle(f"Figure 5: {t['nonempty']} of {t['topologies']} {src} non-empty after "
                     "pruning (2-core, largest component)", fontsize=11)
        if caption:
            _caption(fig, f"routers of degree 2 are edge routers; median {t['median_nodes']:g} "
                          f"routers / {t['median_links']:g} links; boxes: quartiles over "
                          "topologies, whiskers 1.5 IQR")
    return fig


# --------------------------------------------------------------------------- Figure 6
MAXFLOW_PANELS = ("sr_ecmp", "sr_multipath", "sr_by_k")


def _boxes(a: Any, groups: Sequence[float], series: Sequence[Tuple[str, str, str]],
           table: Mapping[Tuple[str, float], Mapping[str, float]],
           annotate: Sequence[str] = ()) -> Dict[Tuple[str, float], Tuple[float, float]]:
    """Grouped boxplots: one group per heavy fraction, one box per series (key, label, color).
    Returns ``{(series, heavy): (x position, median)}``."""
    n = len(series)
    width = 0.8 / n
    where: Dict[Tuple[str, float], Tuple[float, float]] = {}
    for j, (key, label, color) in enumerate(series):
        pos, data = [], []
        for g, heavy in enumerate(groups):
            vals = list(table.get((key, heavy), {}).values())
            if not vals:
                continue
            pos.append(g + (j - (n - 1) / 2) * width)
            data.append(vals)
        if not data:
            continue
        bp = a.boxplot(data, positions=pos, widths=width * 0.85, patch_artist=True,
                       manage_ticks=False, flierprops={"markersize": 2, "alpha": 0.35,
                                                       "markeredgecolor": color},
                       medianprops={"color": "black", "lw": 1.4},
                       whiskerprops={"color": color}, capprops={"color": color})
        for box in bp["boxes"]:
            box.set_facecolor(color)
            box.set_alpha(0.55)
        a.plot([], [], "s", color=color, alpha=0.7, label=label)
        for x, vals, heavy in zip(pos, data, [h for h in groups if table.get((key, h))]):
            med = statistics.median(vals)
            where[(key, heavy)] = (x, med)
            if key in annotate:
                a.annotate(f"{med:.0f}", xy=(x, med), xytext=(0, 3), textcoords="offset points",
                           ha="center", va="bottom", fontsize=7, fontweight="bold", zorder=6,
                           bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                                 "alpha": 0.75})
    a.set_xticks(range(len(groups)))
    return where


def _reference(a: Any, where: Mapping[Tuple[str, float], Tuple[float, float]], key: str,
               values: Mapping[float, float], half: float, label: str, *,
               filled: bool = True) -> None:
    """Seed 000's value for the box of ``key`` at each heavy fraction: a red dashed line across
    the box and a star just right of it (the box's own median number stays readable)."""
    xs, ys = [], []
    for h, v in values.items():
        if (key, h) not in where:
            continue
        x = where[(key, h)][0]
        a.plot([x - half, x + half], [v, v], ls=(0, (2, 1)), color=_COLORS["paper"], lw=1.5,
               zorder=4)
        xs.append(x + half + 0.04)
        ys.append(v)
    if xs:
        a.plot(xs, ys, "*", ms=11, zorder=5, label=label,
               **({"color": _COLORS["paper"], "mec": "white", "mew": 0.6} if filled else
                  {"color": "white", "mec": _COLORS["paper"], "mew": 1.4}))


def _heavy_labels(groups: Sequence[float], table: Mapping[Tuple[str, float], Mapping[str, float]],
                  key: str) -> List[str]:
    return [f"{h:g} %\n(n = {len(table.get((key, h), {}))})" for h in groups]


def plot_maxflow(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                 panels: Optional[Sequence[str]] = None, k: Optional[int] = None,
                 reference: bool = True, caption: bool = True) -> Any:
    """Figure 6: max-flow improvement per heavy-hitter fraction, boxplots over topologies.

    Parameters
    ----------
    rows
        ``tpcstudy maxflow`` rows (:func:`load_results`; its ``meta.json`` feeds the caption).
    ax
        ``None`` (a new figure) or one Axes per panel.
    panels
        ``"sr_ecmp"`` (6a: multipath, sr and mcf over ecmp), ``"sr_multipath"`` (6b: sr over
        multipath), ``"sr_by_k"`` (sr over ecmp for every segment limit). Default: 6a and 6b,
        plus ``sr_by_k`` when the study has several limits.
    k
        The sr segment limit of 6a/6b (default 4, else the largest present).
    reference
        Draw seed 000's medians (71 % at 1 %, 30 % at 10 %; about 5 points less over multipath).
    caption
        Write the configuration under the figure (only for a new figure).

    Returns
    -------
    matplotlib.figure.Figure
    """
    ks = _ks(rows)
    if panels is None:
        panels = ("sr_ecmp", "sr_multipath") + (("sr_by_k",) if len(ks) > 1 else ())
    for p in panels:
        if p not in MAXFLOW_PANELS:
            raise UsageError(f"unknown panel {p!r}; choose from {', '.join(MAXFLOW_PANELS)}")
    k = _default_k(rows) if k is None else int(k)
    if k is not None and ks and k not in ks:
        raise UsageError(f"k = {k}: the study has sr with k = {_fmt_list(ks)}")
    new = ax is None
    fig, axes = _axes_for(ax, len(panels), width=5.6, height=5.2)
    table = maxflow_table(rows, k=k)
    groups = sorted({h for (_, h) in table})
    n_topos = len({t for per in table.values() for t in per})
    for panel, a in zip(panels, axes):
        if panel == "sr_ecmp":
            where = _boxes(a, groups, [("multipath", "multipath (MPTCP over ECMP)", _COLORS["multipath"]),
                                       ("sr", f"sr, k = {k} (TPC)", _COLORS["sr"]),
                                       ("mcf", "mcf (bound: any routing)", _COLORS["mcf"])],
                           table, annotate=("sr",))
            if reference:
                _reference(a, where, "sr", PAPER_MAXFLOW_MEDIANS, 0.8 / 3 * 0.85 / 2,
                           "seed 000 median, sr (71 %, 30 %)")
            a.set_xticklabels(_heavy_labels(groups, table, "sr"))
            a.set_ylabel("max-flow improvement over single-path ECMP (%)")
            a.set_title(f"(a) sr, multipath and mcf over ecmp (sr k = {k})")
        elif panel == "sr_multipath":
            where = _boxes(a, groups, [("sr/multipath", f"sr, k = {k}, over multipath",
                                        _COLORS["sr"])], table, annotate=("sr/multipath",))
            if reference:
                _reference(a, where, "sr/multipath",
                           {h: v - PAPER_MULTIPATH_GAP for h, v in PAPER_MAXFLOW_MEDIANS.items()},
                           0.8 * 0.85 / 2, "seed 000: about 5 points below (a)", filled=False)
            a.set_xticklabels(_heavy_labels(groups, table, "sr/multipath"))
            a.set_ylabel("max-flow improvement of sr over multipath (%)")
            a.set_title(f"(b) sr over multipath (k = {k})")
        else:
            cmap = _sequential(len(ks))
            _boxes(a, groups, [(f"sr k={j}", f"sr, k = {j}", cmap[i]) for i, j in enumerate(ks)],
                   table, annotate=tuple(f"sr k={j}" for j in ks) if len(ks) <= 3 else ())
            a.set_xticklabels(_heavy_labels(groups, table, f"sr k={ks[-1]}" if ks else "sr"))
            a.set_ylabel("max-flow improvement over single-path ECMP (%)")
            a.set_title("(c) sr over ecmp by segment limit k")
        a.set_xlabel("heavy-hitter pairs (% of ordered edge-router pairs)")
        a.set_xlim(-0.5, len(groups) - 0.5)
        a.grid(True, axis="y", alpha=0.3)
        # below the axes: the boxes can reach any height, a legend inside would hide some
        a.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=2,
                 frameon=False)
        lo, hi = a.get_ylim()
        a.set_ylim(min(lo, -5), hi * 1.05)
    if new:
        fig.suptitle("Figure 6: max-flow improvement of adding IPv6 SR (boxes over topologies: "
                     "quartiles, whiskers 1.5 IQR; numbers: medians)", fontsize=11)
        if caption:
            _caption(fig, _config_caption(rows, kind="maxflow", n_topos=n_topos, k=k))
    return fig


def _sequential(n: int) -> List[Any]:
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [cmap(0.1 + 0.8 * i / max(n - 1, 1)) for i in range(n)]


# --------------------------------------------------------------------------- Figure 7
DISJOINT_PANELS = ("max_greedy", "sps", "greedy_ratio")


def greedy_reaches_max(table: Mapping[str, Mapping[str, float]]) -> Tuple[int, int]:
    """(topologies where greedy's mean equals max's, topologies with both)."""
    mx, gr = table.get("max", {}), table.get("greedy", {})
    both = [t for t in mx if t in gr]
    return sum(abs(gr[t] - mx[t]) <= 1e-9 for t in both), len(both)


def plot_disjoint(rows: Sequence[Mapping[str, Any]], ax: Any = None, *,
                  panels: Sequence[str] = DISJOINT_PANELS, reference: bool = True,
                  caption: bool = True) -> Any:
    """Figure 7: link-disjoint paths per edge-router pair, CDFs over topologies.

    Parameters
    ----------
    rows
        ``tpcstudy disjoint`` rows (:func:`load_results`).
    ax
        ``None`` (a new figure) or one Axes per panel.
    panels
        ``"max_greedy"`` (7a), ``"sps"`` (7b: one CDF per segment limit, max dashed),
        ``"greedy_ratio"`` (greedy / max per topology; the step at 1 is the share of topologies
        where greedy reaches max).
    reference
        Draw seed 000's "greedy reaches max on 70 % of topologies".

    Returns
    -------
    matplotlib.figure.Figure
    """
    for p in panels:
        if p not in DISJOINT_PANELS:
            raise UsageError(f"unknown panel {p!r}; choose from {', '.join(DISJOINT_PANELS)}")
    new = ax is None
    fig, axes = _axes_for(ax, len(panels), width=5.0, height=4.2)
    table = disjoint_table(rows)
    reach, both = greedy_reaches_max(table)
    n_topos = len(table.get("max", {}))
    sps_keys = sorted((m for m in table if m.startswith("sps k=")), key=lambda m: int(m[6:]))
    xlabel = "mean link-disjoint paths per edge-router pair (per topology)"
    for panel, a in zip(panels, axes):
        if panel == "max_greedy":
            for m, style in (("max", "-"), ("greedy", "--")):
                vals = list(table.get(m, {}).values())
                _cdf(a, vals, color=_COLORS[m], ls=style, lw=1.8,
                     label=f"{m} ({'Edmonds-Karp' if m == 'max' else 'iterative Dijkstra'}), "
                           f"mean {_mean(vals):.2f}")
            share = 100.0 * reach / both if both else math.nan
            a.text(0.03, 0.97, f"greedy = max on {reach} of {both} topologies ({share:.1f} %)"
                   + (f"\nseed 000: {PAPER_GREEDY_REACHES_MAX:.0f} %" if reference else ""),
                   transform=a.transAxes, va="top", fontsize=8,
                   bbox={"boxstyle": "round", "fc": "white", "ec": "#cccccc"})
            a.set_title("(a) max vs greedy")
        elif panel == "sps":
            colors = _sequential(len(sps_keys))
            for m, c in zip(sps_keys, colors):
                vals = list(table[m].values())
                _cdf(a, vals, color=c, lw=1.6, label=f"sps k = {m[6:]}, mean {_mean(vals):.2f}")
            mx = list(table.get("max", {}).values())
            _cdf(a, mx, color="black", ls=":", lw=1.4, label=f"max, mean {_mean(mx):.2f}")
            a.set_title("(b) sps by segment limit k")
        else:
            ratios = sorted(table["greedy"][t] / table["max"][t]
                            for t in table.get("max", {}) if t in table.get("greedy", {})
                            and table["max"][t] > 0)
            n = len(ratios)
            if n:
                # share of topologies whose ratio is >= x: at x = 1, the share where greedy = max
                xs = [ratios[0]] + ratios
                ys = [1.0] + [1.0 - i / n for i in range(n)]
                a.step(xs, ys, where="post", color=_COLORS["greedy"], lw=1.8,
                       label="greedy / max")
                a.plot([1.0], [reach / both], "o", color="none", mec=_COLORS["greedy"], ms=12,
                       mew=1.6, label=f"ours: {100.0 * reach / both:.1f} % reach max")
                if reference:
                    a.plot([1.0], [PAPER_GREEDY_REACHES_MAX / 100.0], "*",
                           color=_COLORS["paper"], ms=9, mec="white", mew=0.6, zorder=5,
                           label=f"seed 000: {PAPER_GREEDY_REACHES_MAX:.0f} % reach max")
            a.set_xlabel("greedy mean paths / max mean paths (per topology)")
            a.set_ylabel("share of topologies with ratio ≥ x")
            a.set_ylim(0, 1.02)
            a.set_xlim(right=1.01)
            a.set_title("(c) how close greedy comes to max")
            a.grid(True, alpha=0.3)
            a.legend(fontsize=8, loc="lower left")
            continue
        a.set_xlabel(xlabel)
        a.set_ylabel("CDF (share of topologies)")
        a.set_ylim(0, 1.02)
        lo = min([v for m in table for v in table[m].values()] or [1.0])
        a.set_xlim(min(lo, 1.0) - 0.05, max(2.0, a.get_xlim()[1]) + 0.05)
        a.grid(True, alpha=0.3)
        if panel == "sps":  # top left is free: k = 1 is the line at 1, the others rise later
            a.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(0.05, 0.99))
        else:
            a.legend(fontsize=8, loc="center right")
    if new:
        fig.suptitle("Figure 7: link-disjoint paths found per pair of edge routers "
                     "(edge router: 2 links, so at most 2 paths)", fontsize=11)
        if caption:
            _caption(fig, _config_caption(
                rows, kind="disjoint", n_topos=n_topos,
                extra="seed 000 for sps: k = 1 gives 1 path, k = 4 nearly saturates, k > 4 adds "
                      "little"))
    return fig


# --------------------------------------------------------------------------- path tables
def plot_path_table(table: Any, ax: Any = None) -> Any:
    """What a :func:`tpcstudy.path_table` gives the hosts: (a) paths per (source, destination),
    (b) segments per path, default path vs backups, (c) IGP-cost stretch of the backups over
    the default path (CDF).

    Parameters
    ----------
    table
        A :class:`tpcstudy.export.PathTable`, or its ``to_rows()`` records (several tables'
        rows may be concatenated; they need ``source``, ``destination``, ``slot``,
        ``num_segments`` and ``igp_cost``, plus ``topology`` to tell tables apart).
    ax
        ``None`` (a new figure) or three Axes.
    """
    rows = table.to_rows() if hasattr(table, "to_rows") else list(table)
    name = getattr(table, "topology", None)
    new = ax is None
    fig, axes = _axes_for(ax, 3, width=4.6, height=3.8)
    per_entry: Dict[Tuple[Any, Any, Any], List[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        per_entry[(r.get("topology", name), r["source"], r["destination"])].append(r)
    counts = [len(v) for v in per_entry.values()]
    a = axes[0]
    if counts:
        top = max(counts)
        xs = list(range(1, top + 1))
        a.bar(xs, [100.0 * counts.count(x) / len(counts) for x in xs], color="#1f77b4")
        a.set_xticks(xs)
    a.set_xlabel("paths per (source, destination) (count)")
    a.set_ylabel("destinations (% of map entries)")
    a.set_title(f"(a) paths per destination, mean {_mean(counts):.2f}")
    a = axes[1]
    segs0 = [int(r["num_segments"]) for r in rows if int(r["slot"]) == 0]
    segs1 = [int(r["num_segments"]) for r in rows if int(r["slot"]) > 0]
    top = max(segs0 + segs1 + [1])
    xs = list(range(1, top + 1))
    for off, vals, label, color in ((-0.2, segs0, "default path (slot 0)", "#7f7f7f"),
                                    (0.2, segs1, "backups (slots 1+)", "#2ca02c")):
        if vals:
            a.bar([x + off for x in xs], [100.0 * vals.count(x) / len(vals) for x in xs],
                  width=0.4, color=color, label=f"{label}, n = {len(vals)}")
    a.set_xticks(xs)
    a.set_xlabel("segments in the SRH (count)")
    a.set_ylabel("paths (% of their slot group)")
    a.set_title("(b) segments per path")
    a.legend(fontsize=8)
    a = axes[2]
    stretch = []
    for entry in per_entry.values():
        base = [r for r in entry if int(r["slot"]) == 0]
        if base and (_num(base[0]["igp_cost"]) or 0) > 0:
            stretch += [float(r["igp_cost"]) / float(base[0]["igp_cost"]) for r in entry
                        if int(r["slot"]) > 0]
    _cdf(a, stretch, color="#2ca02c", lw=1.8)
    if stretch:
        med = statistics.median(stretch)
        a.axvline(med, color="#7f7f7f", ls=":", lw=1)
        a.annotate(f"median {med:.2f}", xy=(med, 0.5), xytext=(6, 0), textcoords="offset points",
                   fontsize=8)
    if stretch and max(stretch) > 5:
        a.set_xscale("log")
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

        a.xaxis.set_major_locator(FixedLocator([t for t in (1, 1.5, 2, 3, 5, 10, 20, 50, 100)
                                                if t <= max(stretch) * 1.5]))
        a.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        a.xaxis.set_minor_formatter(NullFormatter())
    a.set_xlabel("backup IGP cost / default path IGP cost (ratio"
                 + (", log scale)" if stretch and max(stretch) > 5 else ")"))
    a.set_ylabel("CDF (share of backup paths)")
    a.set_ylim(0, 1.02)
    a.set_title("(c) backup stretch")
    for a in axes:
        a.grid(True, alpha=0.3)
    if new:
        names = sorted({str(r["topology"]) for r in rows if r.get("topology")})
        what = name or (", ".join(names) if 0 < len(names) <= 3 else
                        f"{len(names)} topologies, entries pooled" if names else "path table")
        k = getattr(table, "k", None)
        paths = getattr(table, "max_paths", None)
        fig.suptitle(f"Path table for the TPC agent: {what} ({len(per_entry)} map entries"
                     + (f"; sps k = {k}, at most {paths} paths" if k else "") + ")", fontsize=11)
    return fig


# --------------------------------------------------------------------------- saving
def save_figure(fig: Any, path_stem: Union[str, Path], *, formats: Sequence[str] = ("png", "pdf"),
                dpi: int = 150) -> List[Path]:
    """Write ``fig`` as ``<path_stem>.png`` and ``.pdf`` (or ``formats``), each atomically.

    The figure is rendered into memory first, so a crash never leaves a half-written file.
    PDFs carry no creation date (identical inputs give identical files). Returns the paths.
    """
    from .io import atomic_write_bytes

    stem = Path(path_stem)
    if stem.suffix.lower() in (".png", ".pdf", ".svg"):
        stem = stem.with_suffix("")
    out = []
    for fmt in formats:
        fmt = fmt.lower().lstrip(".")
        if fmt not in ("png", "pdf", "svg"):
            raise UsageError(f"unknown figure format {fmt!r}; choose png, pdf or svg")
        buf = io.BytesIO()
        metadata = {"png": {"Software": None}, "pdf": {"CreationDate": None},
                    "svg": {"Date": None}}[fmt]
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
        path = stem.parent / f"{stem.name}.{fmt}"
        atomic_write_bytes(path, buf.getvalue())
        out.append(path)
    return out


def plot_results(results: Results, **kw: Any) -> Tuple[str, Any]:
    """(figure name, figure) for any :class:`Results`: fig5-topologies, fig6-maxflow or
    fig7-disjoint."""
    if results.kind == "topo":
        return "fig5-topologies", plot_topologies(results, **kw)
    if results.kind == "maxflow":
        return "fig6-maxflow", plot_maxflow(results, **kw)
    return "fig7-disjoint", plot_disjoint(results, **kw)


def summary_line(results: Results, *, k: Optional[int] = None) -> str:
    """One line of key numbers beside seed 000's."""
    if results.kind == "topo":
        t = topology_table(results)
        return (f"{t['nonempty']} of {t['topologies']} topologies non-empty after pruning; "
                f"median {t['median_nodes']:g} routers / {t['median_links']:g} links; largest "
                f"{t['largest']} ({max(t['nodes']) if t['nodes'] else 0} routers)")
    if results.kind == "maxflow":
        k = _default_k(results) if k is None else k
        table = maxflow_table(results, k=k)
        parts = []
        for h in sorted({h for (_, h) in table}):
            sr = list(table.get(("sr", h), {}).values())
            mp = list(table.get(("sr/multipath", h), {}).values())
            paper = PAPER_MAXFLOW_MEDIANS.get(h)
            parts.append(f"{h:g} %: sr/ecmp {statistics.median(sr) if sr else math.nan:.1f}"
                         + (f" (seed 000: {paper:.0f})" if paper else "")
                         + f", sr/multipath {statistics.median(mp) if mp else math.nan:.1f}")
        return f"median improvement (k = {k}): " + "; ".join(parts)
    table = disjoint_table(results)
    reach, both = greedy_reaches_max(table)
    sps = sorted((m for m in table if m.startswith("sps")), key=lambda m: int(m[6:]))
    return (f"greedy = max on {reach}/{both} topologies "
            f"({100.0 * reach / both if both else math.nan:.1f} %, seed 000: {PAPER_GREEDY_REACHES_MAX:g} %); mean paths: "
            f"max {_mean(list(table.get('max', {}).values())):.3f}, "
            + ", ".join(f"k={m[6:]} {_mean(list(table[m].values())):.3f}" for m in sps))


# --------------------------------------------------------------------------- CLI
def cmd_plot(args: argparse.Namespace) -> int:
    from .cli import _apply_mirror

    _apply_mirror(args)
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    if not formats:
        raise UsageError("--format: empty list")
    inputs: List[Results] = [load_results(p) for p in args.inputs]
    if args.topo:
        inputs.append(topo_stats(args.topo, capacity=args.capacity, weight=args.weight))
    if not inputs:
        raise UsageError("nothing to plot: give result folders or files, or --topo SPEC")
    kinds: Dict[str, int] = defaultdict(int)
    for r in inputs:
        kinds[r.kind] += 1
    out = Path(args.out)
    for r in inputs:
        if not r:
            raise UsageError(f"{r.source}: no rows to plot")
        kw: Dict[str, Any] = {"k": args.k} if r.kind == "maxflow" and args.k else {}
        name, fig = plot_results(r, **kw)
        if kinds[r.kind] > 1:
            name = f"{name}-{r.label}"
        files = save_figure(fig, out / name, formats=formats, dpi=args.dpi)
        print(f"{r.source} ({r.kind}, {len(r)} rows): " + summary_line(r, k=kw.get("k")))
        for f in files:
            print(f"  wrote {f}")
    return 0


def register_cli(sub: Any, add_topology_options: Any) -> None:
    p = sub.add_parser(
        "plot", help="figures 5-7 of seed 000 from topo stats and study results (PNG, PDF)",
        description="Draw seed 000's figures from study outputs: topology statistics (a 'topo "
                    "stats --out' CSV or '--json' file, or --topo SPEC to compute them) -> Figure "
                    "5; a maxflow results folder -> Figure 6; a disjoint results folder -> Figure "
                    "7. The kind is read from meta.json and the CSV columns.")
    p.add_argument("inputs", nargs="*", metavar="DIR_OR_FILE",
                   help="result folders (meta.json + results.csv) or topo stats CSV/JSON files")
    add_topology_options(p, topo_required=False)
    p.add_argument("--out", required=True, metavar="FIGDIR", help="folder for the figures")
    p.add_argument("--format", default="png,pdf", help="comma-separated: png, pdf, svg "
                                                       "(default png,pdf)")
    p.add_argument("--k", type=int, default=None,
                   help="sr segment limit for Figure 6a/6b (default 4, else the largest)")
    p.add_argument("--dpi", type=int, default=150, help="PNG resolution (default 150)")
    p.set_defaults(func=cmd_plot)
