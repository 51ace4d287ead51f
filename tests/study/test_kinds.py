"""The one registry of results kinds: one row of every kind written through the store (with
its meta.json, as the study or experiment writes it), read back by ``load_results``, shown by
``tpcstudy show`` (text and ``--json``) and drawn by ``tpcstudy plot``; and no second list of
kinds anywhere in the package."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tpcstudy.cli import main
from tpcstudy.study.kinds import KINDS, kind
from tpcstudy.study.provenance import write_meta
from tpcstudy.study.store import ResultStore, load_results

SRC = Path(__file__).resolve().parents[2] / "src" / "tpcstudy"

#: Cells that are not a plain number (the rest of a row is 1, or 2 for a few ratios).
_TEXT = {
    "topology": "Abilene", "name": "Abilene", "source": "Seattle", "destination": "Denver",
    "model": "sr", "method": "max", "matrix": "file", "strategy": "nrto", "param": "n=1",
    "policy": "random", "scenario": "Abilene", "check": "path", "variant": "plain",
    "prefix": "fd00::/64", "waypoints": "Seattle Denver", "map": "dest", "status": "ok",
    "error": "", "capacity_rule": "uniform", "weight_rule": "hop", "slot_share": "1",
    "failed_link": "Seattle-Denver", "lp_solution": "", "settings": "", "per_host": "1",
    "path_use": "1", "counts": "", "fcts": "", "shape": "", "loaded": "true",
    "identical": "true", "run": "0", "draw": "0", "seed": "0", "heavy": "10", "k": "4",
    "subflows": "1", "second": "0",
}


def _row(name: str):
    row = {c: _TEXT.get(c, 1) for c in KINDS[name].columns}
    if name == "disjoint":
        row["k"] = ""  # max and greedy have no segment limit
    return row


@pytest.mark.parametrize("name", list(KINDS))
def test_one_row_of_every_kind_round_trips(name, tmp_path, capsys):
    out = tmp_path / name
    k = kind(name)
    write_meta(out, {"note": "round trip"}, kind=name)
    store = ResultStore(out, list(k.columns), list(k.key))
    store.put("t0", [_row(name)])
    store.flush()
    results = load_results(out)
    assert results.kind == name and len(results) == 1
    assert list(results[0]) == store.columns
    # show: the summary as text and as JSON, exit 0 (the row is ok)
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.strip()
    assert main(["show", "--json", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == name and doc["rows"] == 1
    # plot: the kind's figure under the registry's file name
    figs = tmp_path / "figs"
    assert main(["plot", str(out), "--out", str(figs), "--format", "png"]) == 0
    assert f"({name}, 1 rows)" in capsys.readouterr().out
    assert (figs / f"{k.figure}.png").stat().st_size > 0


def test_every_writer_takes_its_columns_from_the_registry():
    from tpcstudy.emulate.experiments import failover, failures, policies, semper, throughput, verify
    from tpcstudy.study import disjoint, maxflow, mlu, stats
    assert stats.STATS_COLUMNS == list(KINDS["topo"].columns)
    for mod, name in ((maxflow, "maxflow"), (disjoint, "disjoint"), (mlu, "mlu")):
        assert (mod.COLUMNS, mod.KEY) == (list(KINDS[name].columns), list(KINDS[name].key))
    for mod in (throughput, failover, failures, policies, semper, verify):
        assert mod.COLUMNS == list(KINDS[mod.KIND].columns)
    assert semper.FAULT_COLUMNS == list(KINDS[semper.FAULT_KIND].columns)
    assert {m.KIND for m in (throughput, failover, failures, policies, semper, verify)} | \
        {semper.FAULT_KIND} == {n for n in KINDS if kind(n).emulated}


def test_no_second_list_of_kinds():
    """No literal (tuple, list, set, dict keys, ``in (...)``) outside the registry names two
    kinds or more: every list of kinds is derived from :data:`KINDS`."""
    names = set(KINDS)
    # literals that share words with the kinds but list other things
    other = {"export/select.py": "path-selection rules", "cli/__init__.py": "verbs",
             "cli/maxflow.py": "--objective choices"}
    found = []
    for p in SRC.rglob("*.py"):
        if p.relative_to(SRC).as_posix() in ("study/kinds.py", *other):
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            items = (node.keys if isinstance(node, ast.Dict)
                     else node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [])
            strings = {i.value for i in items if isinstance(i, ast.Constant)}
            if len(strings & names) >= 2:
                found.append(f"{p.relative_to(SRC)}:{node.lineno}: {sorted(strings & names)}")
    assert not found, found


def test_unknown_kind_is_refused():
    from tpcstudy.errors import UsageError
    with pytest.raises(UsageError, match="unknown result kind 'nope'"):
        kind("nope")
