"""benchmarks/mainjob.py's row comparison: timings ignored, any other difference caught."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mainjob():
    spec = importlib.util.spec_from_file_location("mainjob_bench", ROOT / "benchmarks" / "mainjob.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["mainjob_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_rows_compare_without_their_timings(tmp_path):
    m = _mainjob()
    head = "topology,heavy,model,value,seconds,seconds_lp\n"
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text(head + "Abilene,1.0,sr,3.5,0.1,0.01\nGeant,1.0,sr,2.0,0.2,0.02\n")
    b.write_text(head + "Geant,1.0,sr,2.0,9.9,0.5\nAbilene,1.0,sr,3.5,0.3,0.07\n")  # order, times
    c.write_text(head + "Abilene,1.0,sr,3.5000001,0.1,0.01\nGeant,1.0,sr,2.0,0.2,0.02\n")
    assert m.compare(a, b) == []
    diff = m.compare(a, c)
    assert len(diff) == 1 and "Abilene" in diff[0] and "3.5000001" in diff[0]
    assert m.main(["--compare", str(a), str(b)]) == 0
    assert m.main(["--compare", str(a), str(c)]) == 1


def test_values_compare_leaves_the_solvers_path_aside(tmp_path):
    """--values: rows matched by their key; iterations, columns, gap and used_paths_max may
    differ (counted as another vertex), a value only by 1e-9 relative."""
    m = _mainjob()
    head = "topology,heavy,seed,model,k,subflows,value,iterations,used_paths_max,seconds\n"
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text(head + "Kdl,1.0,0,sr,4,,136.64929352556123,9,3,1.0\nAbilene,1.0,0,sr,4,,2.0,1,1,0.1\n")
    b.write_text(head + "Abilene,1.0,0,sr,4,,2.0,1,1,0.2\nKdl,1.0,0,sr,4,,136.64929352556125,19,4,0.6\n")
    c.write_text(head + "Kdl,1.0,0,sr,4,,136.6493,9,3,1.0\nAbilene,1.0,0,sr,4,,2.0,1,1,0.1\n")
    assert m.compare(a, b) != []  # the strict comparison sees the solver's path
    assert m.compare_values(a, b) == ([], 1)
    diffs, _ = m.compare_values(a, c)
    assert len(diffs) == 1 and "Kdl" in diffs[0] and "value" in diffs[0]
    assert m.main(["--compare", str(a), str(b), "--values"]) == 0
    assert m.main(["--compare", str(a), str(c), "--values"]) == 1
