"""``tpcstudy control`` on an agent loaded on this host (no emulator: ``--push local`` on the
saved agent of the host's name, events appended to a watched file), in the agent's sandbox
(tests/hostagent/sandbox.py): the controller swaps the table on a link event (the agent's
generation moves on), is SIGKILLed between its two pushes (``--controller-at both``, the IGP
taken to need --igp-delay 30 s), and ``agent unload`` then leaves no pin, cgroup, tc filter,
clsact qdisc, record or temporary folder (the developers' guide: nothing left after SIGKILL)."""

from __future__ import annotations

import pytest

from tpcstudy import path_table, prune, read_topology, write_paths

from .sandbox import run


@pytest.fixture(scope="module")
def table(tmp_path_factory, zoo_installed):
    out = tmp_path_factory.mktemp("control-table")
    write_paths(path_table(prune(read_topology("zoo/Abilene")), k=4, paths=8, select="maxflow"),
                out, formats=["json", "bpf"], variant="exp3_lowest_completion")
    return out


_KILL = r"""
r = cli("agent", "load", "--table", TABLE, "--host", "Chicago", "--cgroup", str(BASE / "cg"),
        "--name", "Chicago")
assert r.returncode == 0, r.stderr
OUT["gen0"] = record("Chicago").get("generation")
events = Path(os.environ["TMPDIR"]).parent / "events.txt"
events.write_text("")
p = subprocess.Popen([sys.executable, "-m", "tpcstudy", "control", "--topo", "zoo/Abilene",
                      "--table", TABLE, "--hosts", "Chicago", "--events", str(events),
                      "--push", "local", "--igp-delay", "30", "--json"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
line = p.stderr.readline()
if "waiting for link events" not in line:
    p.kill()
    raise SystemExit("control did not start: " + line + p.stderr.read()[-2000:])
with open(events, "a") as fh:
    fh.write("down Chicago Indianapolis\n")
OUT["first"] = json.loads(p.stdout.readline())
OUT["status"] = cli("agent", "status", "--json").stdout
p.send_signal(signal.SIGKILL)  # the settle push is 30 s away
p.wait()
p.stdout.close()
p.stderr.close()
OUT["unload"] = cli("agent", "unload", "Chicago").returncode
events.unlink()
OUT["end"] = state()
"""


def test_sigkill_of_control_between_its_pushes_then_unload_leaves_nothing(table):
    import json

    out = run(_KILL, table, timeout=300)
    first = out["first"]
    assert first["down"] == "Chicago-Indianapolis" and first["pushed"] == ["Chicago"]
    assert not first["failed"] and first["per_host"][0]["generation"] == out["gen0"] + 1
    st = json.loads(out["status"])["Chicago"]
    assert st["generation"] == first["per_host"][0]["generation"]
    assert out["unload"] == 0
    end = out["end"]
    assert end["pins"] == []
    assert end["cgroups"] == [] and end["filters"] == {"h0": [], "h1": []}
    assert all("clsact" not in q for q in end["qdiscs"].values())
    assert end["records"] == [] and end["tmp"] == []
