"""What every figure owes its reader (issue 43): one colour per series, legends off the data,
a title naming the data set and the finding, file names without a doubled word; notebooks
tagged for papermill."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from tpcstudy import plotting
from tpcstudy.plotting.emulation import plain_log_ticks
from tpcstudy.plotting.mlu import plot_mlu, series_style

ROOT = Path(__file__).resolve().parents[2]


def _mlu_rows():
    rows = []
    for topo, e, mp, s2, s4, m in (("A", 2.0, 1.8, 1.0, 1.0, 1.0), ("B", 1.5, 1.5, 1.2, 0.9, 0.9)):
        base = {"topology": topo, "seed": 0, "status": "ok", "matrix": f"{topo}.0000.demands"}
        for model, k, v in (("ecmp", "", e), ("multipath", "", mp), ("sr", 2, s2), ("sr", 4, s4),
                            ("sr-unsplit", 2, s2), ("sr-unsplit", 4, s4), ("mcf", "", m)):
            rows.append(dict(base, model=model, k=k, mlu=v, reduction=100 * (1 - v / e),
                             gap=0.0 if model == "sr-unsplit" else ""))
    return rows


def test_mlu_figure_one_colour_per_series_and_its_finding():
    series = ["ecmp", "multipath", "sr k=2", "sr k=4", "sr-unsplit k=2", "sr-unsplit k=4", "mcf"]
    assert len({series_style(s)[0] for s in series}) == len(series)
    fig = plot_mlu(_mlu_rows())
    title = fig._suptitle.get_text()
    # sr k=2 reaches mcf on A only, k=4 on both: the finding, from the study's summary
    assert "finding: sr k=2 = mcf on 1 of 2; sr k=4 = mcf on 2 of 2" in title
    assert "2 topologies" in title and "the demand matrices beside the topologies" in title
    colours = {ln.get_label(): ln.get_color() for ln in fig.axes[1].lines}
    assert len(set(colours.values())) == len(colours) == 7
    mcf = [ln for ln in fig.axes[1].lines if ln.get_label() == "mcf"][0]
    assert mcf.get_zorder() > max(ln.get_zorder() for ln in fig.axes[1].lines if ln is not mcf)
    fig.canvas.draw()
    for ax in fig.axes:  # every legend under its panel, off the curves
        leg = ax.get_legend().get_window_extent()
        assert leg.y1 <= ax.get_window_extent().y0


def test_figure_names_never_double_a_word():
    res = SimpleNamespace(kind="maxflow", label="maxflow-Abilene-Aarnet")
    assert plotting.figure_name(res) == "fig6-maxflow-Abilene-Aarnet"
    assert plotting.figure_name(SimpleNamespace(kind="disjoint", label="run1")) == \
        "fig7-disjoint-run1"


def test_log_ticks_read_as_plain_numbers():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    ax.plot([0.05, 7.0], [0, 1])
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert "0.1" in labels and "1" in labels and not any("10^" in x or "$" in x for x in labels)


def test_notebooks_have_a_parameters_cell():
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1 and tagged[0]["cell_type"] == "code", nb.name
        assert "OUT" in "".join(tagged[0]["source"]) or "TOPO" in "".join(tagged[0]["source"])
