"""``tpcstudy export``: bpf files of a Zoo topology, decoded back with ``--inspect``; errors."""

from __future__ import annotations

import ipaddress
import json
import struct

import tpcstudy
from tpcstudy import export as X
from tpcstudy.cli import main

IP = ipaddress.IPv6Address


# ----------------------------------------------------------------- the CLI
def test_cli_bpf_and_inspect(zoo_installed, tmp_path, capsys):
    out = tmp_path / "ab"
    rc = main(["export", "--topo", "zoo/Abilene", "--format", "bpf", "--variant",
               "exp3_lowest_delay", "--out", str(out)])
    assert rc == 0
    capsys.readouterr()
    folder = out / "bpf-exp3_lowest_delay"
    table = X.path_table(tpcstudy.read_topology("zoo/Abilene"))
    bins = sorted(folder.glob("*.bin"))
    assert len(bins) == len(table.sources) == 5
    for b in bins:
        blob = b.read_bytes()
        _, _, _, size, count, _, _ = struct.unpack_from("<8sIIII16s16s", blob)
        assert size == 1684 and len(blob) == 56 + count * (8 + 1684)
        assert main(["export", "--inspect", str(b), "--json"]) == 0
        res = json.loads(capsys.readouterr().out)
        mine = table.select(source=res["source"]).entries
        assert len(res["entries"]) == count == len(mine)
        for got, e in zip(res["entries"], mine):
            assert got["destination"] == e.destination and got["key"] == e.key.hex()
            assert [p["segments"] for p in got["paths"]] == [[str(a) for a in p.segments]
                                                            for p in e.paths]
            assert [p["waypoints"] for p in got["paths"]] == [p.waypoints for p in e.paths]
            assert [p["delay_ms"] for p in got["paths"]] == [round(p.delay_ms) for p in e.paths]
            assert got["weights"] == [1.0] * 8 and got["last_srtt"] == [0] * 8
    for batch in folder.glob("*.batch"):
        for line in batch.read_text().splitlines():
            if not line.startswith("#"):
                assert len(line.split()[line.split().index("value") + 2:]) == 1684
    assert main(["export", "--inspect", str(bins[0])]) == 0
    text = capsys.readouterr().out
    assert "variant exp3_lowest_delay, map short_dest_map" in text and "slot 0:" in text
    # errors: a clear message, exit code 2
    assert main(["export", "--topo", "zoo/Abilene", "--out", str(tmp_path / "x"),
                 "--paths", "9"]) == 2
    assert "1 to 8 paths" in capsys.readouterr().err
    # a file that cannot be read is a failure at run time (README: exit 1), not a usage error
    assert main(["export", "--inspect", str(tmp_path / "nope.bin")]) == 1
    assert "nope.bin: cannot read (No such file or directory)" in capsys.readouterr().err
