"""``export --inspect`` flags what makes a whole batch file unusable by the agent: more entries
than its map holds (1024), and a pin path whose map is not the variant's (another tool's map)."""

from __future__ import annotations

from tpcstudy import path_table, prune, read_topology, write_paths
from tpcstudy.export.decode import format_inspection, inspect_file


def _batch(tmp_path):
    write_paths(path_table(prune(read_topology("zoo/Abilene"))), tmp_path / "t",
                formats=["bpf"])
    return (tmp_path / "t" / "bpf-n_rto" / "Chicago.batch").read_text()


def test_inspect_flags_too_many_entries_and_a_foreign_map(tmp_path, zoo_installed):
    src = _batch(tmp_path)
    line = next(ln for ln in src.splitlines() if ln.startswith("map update"))
    tok = line.split()
    k = tok.index("key") + 2
    lines = []
    for i in range(1100):
        tok[k:k + 8] = [f"{b:02x}" for b in i.to_bytes(8, "big")]
        lines.append(" ".join(tok))
    big = tmp_path / "big.batch"
    big.write_text("\n".join(lines) + "\n")
    res = inspect_file(big)
    assert res["problems"] == ["1100 entries: the agent's dest_map holds 1024"]
    assert "problem: 1100 entries" in format_inspection(res)
    foreign = tmp_path / "foreign.batch"
    foreign.write_text(src.replace("/dest_map ", "/othertool_map "))
    res = inspect_file(foreign)
    assert len(res["problems"]) == 1 and "othertool_map" in res["problems"][0]
    assert "is not the n_rto layout's 'dest_map'" in format_inspection(res)
    ok = tmp_path / "ok.batch"
    ok.write_text(src)
    assert inspect_file(ok)["problems"] == []
