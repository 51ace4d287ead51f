"""What the figures share: figures and axes, CDFs, captions with the study's configuration,
colours, and saving (PNG, PDF, SVG; atomically, with no dates inside).

Figures are plain :class:`matplotlib.figure.Figure` objects drawn with the Agg canvas: no
``pyplot`` state, no screen.
"""

from __future__ import annotations

import io
import math
import statistics
import textwrap
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..errors import UsageError
from ..io import atomic_write_bytes
from ..study.store import Results

__all__ = ["COLORS", "new_figure", "axes_for", "cdf", "caption", "source_name", "fmt_list",
           "config_caption", "sequential", "save_figure", "mean_or_nan"]

COLORS = {"ecmp": "#7f7f7f", "multipath": "#1f77b4", "sr": "#2ca02c", "mcf": "#9467bd",
          "max": "#000000", "greedy": "#ff7f0e", "paper": "#d62728"}


def mean_or_nan(values: Sequence[float]) -> float:
    """The mean of ``values`` (nan for none)."""
    return statistics.fmean(values) if values else math.nan


def new_figure(n: int, *, width: float = 5.0, height: float = 4.0) -> Any:
    fig = Figure(figsize=(width * n, height), layout="constrained")
    FigureCanvasAgg(fig)
    fig.subplots(1, n)
    return fig


def axes_for(ax: Any, n: int, **kw: Any) -> Tuple[Any, List[Any]]:
    """(figure, list of n axes): new ones, or the caller's ``ax`` (one Axes or a sequence)."""
    if ax is None:
        fig = new_figure(n, **kw)
        return fig, list(fig.axes)
    axes = [ax] if isinstance(ax, Axes) else list(getattr(ax, "flat", ax))
    if len(axes) != n:
        raise UsageError(f"{n} panel(s) to draw but {len(axes)} axes given")
    return axes[0].figure, axes


def cdf(ax: Any, values: Sequence[float], **kw: Any) -> None:
    xs = sorted(values)
    n = len(xs)
    if not n:
        return
    ys = [(i + 1) / n for i in range(n)]
    ax.step([xs[0]] + xs, [0.0] + ys, where="post", **kw)


def caption(fig: Any, text: str) -> None:
    """The configuration under the figure, wrapped to its width (about 14 characters of 8 pt
    text per inch)."""
    if text:
        width = max(40, int(fig.get_figwidth() * 14))
        fig.supxlabel("\n".join(textwrap.wrap(text, width)), fontsize=8, color="#444444")


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if len(names) <= 3 else \
        f"{', '.join(names[:2])} and {len(names) - 2} more"


def source_name(results: Any) -> str:
    """Where the topologies of ``results`` came from, for a caption: ``Topology Zoo``,
    ``Topology Zoo Abilene, Aarnet``, ``REPETITA Abilene``, a file or folder name."""
    topo: Any = results.config.get("topo") if isinstance(results, Results) else None
    specs = [str(x) for x in (topo if isinstance(topo, (list, tuple))
                              else str(topo or "").split(",")) if str(x)]
    if not specs:
        return ""
    if specs == ["zoo"]:
        return "Topology Zoo"
    if all(x.startswith("zoo/") for x in specs):
        return f"Topology Zoo {_names([x[4:] for x in specs])}"
    if specs == ["sndlib"]:
        return "SNDlib"
    if all(x.startswith("sndlib/") for x in specs):
        return f"SNDlib {_names([x[7:] for x in specs])}"
    if all("repetita" in x.lower() for x in specs):
        return f"REPETITA {_names([Path(x).name for x in specs])}"
    return _names([Path(x).name for x in specs])


def _rule(value: Any, what: str) -> str:
    if value in (None, ""):
        return ""
    v = str(value).split(":")[0]
    if v == "file":
        return f"{what} from the topology files"
    return f"{what} {v}"


def fmt_list(values: Iterable[Any], unit: str = "") -> str:
    return ", ".join(f"{float(v):g}" if isinstance(v, (int, float)) else str(v)
                     for v in values) + unit


def config_caption(results: Any, *, kind: str, n_topos: int, k: Optional[int] = None,
                    extra: str = "") -> str:
    cfg = results.config if isinstance(results, Results) else {}
    parts = []
    src = source_name(results)
    parts.append(f"{src + ': ' if src else ''}{n_topos} topolog{'y' if n_topos == 1 else 'ies'}")
    cap = _rule(cfg.get("capacity", cfg.get("capacity_rule")), "capacities")
    wei = _rule(cfg.get("weight", cfg.get("weight_rule")), "IGP weights")
    parts += [x for x in (cap, wei) if x]
    if kind == "maxflow":
        if cfg.get("demands"):  # the demand matrix's pairs, not a heavy-hitter sample
            parts.append("every pair of each topology's demand matrix, bounded by its demand "
                         f"(--demands {cfg['demands']})")
        elif cfg.get("heavy"):
            parts.append(f"heavy hitters {fmt_list(cfg['heavy'], ' %')} of ordered edge-router "
                         "pairs")
        seeds = results.seeds if isinstance(results, Results) else []
        if seeds and not cfg.get("demands"):
            parts.append(f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''} per fraction"
                         + (" (averaged per topology)" if len(seeds) > 1 else ""))
        if k is not None:
            parts.append(f"sr k = {k}" + (f" (study: k = {fmt_list(cfg['k'])})"
                                         if len(cfg.get("k") or []) > 1 else ""))
    if kind == "disjoint":
        if cfg.get("pairs"):
            parts.append(f"pairs: {cfg['pairs']} routers")
        if cfg.get("k"):
            parts.append(f"sps k = {fmt_list(cfg['k'])}")
    if extra:
        parts.append(extra)
    meta = results.meta if isinstance(results, Results) else {}
    if meta.get("git_commit"):
        parts.append(f"tpcstudy {meta.get('tpcstudy', '')} @ {str(meta['git_commit'])[:7]}")
    return "; ".join(parts)


def sequential(n: int) -> List[Any]:
    cmap = colormaps["viridis"]
    return [cmap(0.1 + 0.8 * i / max(n - 1, 1)) for i in range(n)]


def save_figure(fig: Any, path_stem: Union[str, Path], *, formats: Sequence[str] = ("png", "pdf"),
                dpi: int = 150) -> List[Path]:
    """Write ``fig`` as ``<path_stem>.png`` and ``.pdf`` (or ``formats``), each atomically.

    The figure is rendered into memory first, so a crash never leaves a half-written file.
    PDFs carry no creation date (identical inputs give identical files). Returns the paths.
    """
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
