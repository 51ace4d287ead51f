"""The agent's own state on a real host (issue 44, items 5-7 and its ugly cases), each case in a
private network/mount/pid/cgroup namespace with a fresh bpffs (tests/hostagent/sandbox.py):

- a second agent (another name) beside the first, and a second load that fails: the first
  stays attached (its tc filters, by program id; its sockops; its pins);
- SIGKILL at any moment of ``agent load``: ``status`` lists what the record says, ``unload
  NAME`` then leaves no pin, cgroup, filter, qdisc, record or temporary folder (ten kills);
- a forged record (another tool's pins, an empty cgroup, a filter of pref 49) removes nothing
  that is not the agent's;
- ``unload`` removes the parents ``load --cgroup a/b`` created, and only them;
- one broken record beside a live agent: ``status`` still shows the agent.

Without root: ``--mtu 0`` refused before anything; ``status`` with broken records only."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tpcstudy import UsageError, path_table, prune, read_topology, write_paths
from tpcstudy.hostagent import loader

from .sandbox import run

ENV = dict(os.environ, PYTHONSAFEPATH="1")


@pytest.fixture(scope="module")
def table(tmp_path_factory, zoo_installed):
    out = tmp_path_factory.mktemp("agent-table")
    write_paths(path_table(prune(read_topology("zoo/Abilene"))), out, formats=["json", "bpf"])
    return out


# ----------------------------------------------------------------- without root
def test_mtu_zero_is_refused_before_anything(table):
    for bad in (0, -1, 1279, 65536):
        with pytest.raises(UsageError, match=f"--mtu {bad}: IPv6 needs 1280 to 65535"):
            loader.load(table, "Chicago", "/nonexistent-cgroup-root/x", mtu=bad)


def test_status_lists_every_record_even_beside_broken_ones(tmp_path):
    d = tmp_path / "agent"
    d.mkdir()
    (d / "bad.json").write_text("{ not json")
    half = {"name": "half", "host": "Chicago", "table": "/t", "variant": "n_rto",
            "value_size": 1556, "entries": 4, "policy": "first", "mtu": 1500,
            "cgroup": str(loader.CGROUP_ROOT / "tpc" / "half"), "netns": None,
            "interfaces": ["eth0"], "private": False, "state": "loading", "pid": 999_999_999}
    (d / "half.json").write_text(json.dumps(half))
    p = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "status"], capture_output=True,
                       text=True, env=dict(ENV, TPCSTUDY_RUN_DIR=str(tmp_path)), timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    lines = p.stdout.splitlines()
    assert any(ln.startswith("bad: ") and "not an install record" in ln for ln in lines)
    assert any(ln.startswith("half: load interrupted (pid 999999999): tpcstudy agent unload "
                             "half") for ln in lines)
    js = subprocess.run([sys.executable, "-m", "tpcstudy", "agent", "status", "--json"],
                        capture_output=True, text=True,
                        env=dict(ENV, TPCSTUDY_RUN_DIR=str(tmp_path)), timeout=60)
    doc = json.loads(js.stdout)
    assert set(doc) == {"bad", "half"} and all("error" in v for v in doc.values())


# ----------------------------------------------------------------- root, in the sandbox
_SECOND = r"""
r1 = cli("agent", "load", "--table", TABLE, "--host", "Chicago", "--cgroup", str(BASE / "cg"),
         "--name", "s1")
assert r1.returncode == 0, r1.stderr
s1 = record("s1")
OUT["s1_prog"] = s1["prog_ids"]["tpc_egress"]
OUT["s1_sockops"] = s1["prog_ids"]["tpc_sockops"]
# the issue's case: the same table and host, the same cgroup, another name
r2 = cli("agent", "load", "--table", TABLE, "--host", "Chicago", "--cgroup", str(BASE / "cg"),
         "--name", "s2")
OUT["s2_rc"], OUT["s2_err"] = r2.returncode, r2.stderr[-300:]
OUT["both"] = state()
OUT["both_sockops"] = sockops(BASE / "cg")
OUT["s2_unload"] = cli("agent", "unload", "s2").returncode
OUT["after_s2"] = state()
OUT["after_s2_sockops"] = sockops(BASE / "cg")
# a load that fails: its folder is taken by another tool's pinned map
os.makedirs("/sys/fs/bpf/tpcstudy/s3")
subprocess.run(["bpftool", "map", "create", "/sys/fs/bpf/tpcstudy/s3/theirs", "type", "array",
                "key", "4", "value", "4", "entries", "1", "name", "theirs"], check=True)
r3 = cli("agent", "load", "--table", TABLE, "--host", "Chicago", "--cgroup",
         str(BASE / "cg3"), "--name", "s3")
OUT["s3_rc"], OUT["s3_err"] = r3.returncode, r3.stderr[-300:]
OUT["after_s3"] = state()
OUT["after_s3_sockops"] = sockops(BASE / "cg")
OUT["status_rc"] = cli("agent", "status").returncode
OUT["s1_unload"] = cli("agent", "unload", "s1").returncode
OUT["end"] = state()
"""


def _ours(filters, prog):
    return [f for f in filters if f["prog"] == prog]


def test_a_second_agent_never_detaches_the_first(table):
    out = run(_SECOND, table)
    p1 = out["s1_prog"]
    # a second agent of another name loads beside the first (its own folder, its own handle)
    assert out["s2_rc"] == 0, out["s2_err"]
    for dev in ("h0", "h1"):
        assert len(_ours(out["both"]["filters"][dev], p1)) == 1
        assert len(out["both"]["filters"][dev]) == 2
    assert out["s1_sockops"] in out["both_sockops"] and len(out["both_sockops"]) == 2
    # unloading the second leaves the first attached
    assert out["s2_unload"] == 0
    for dev in ("h0", "h1"):
        assert out["after_s2"]["filters"][dev] == _ours(out["after_s2"]["filters"][dev], p1)
        assert len(out["after_s2"]["filters"][dev]) == 1
        assert "clsact" in out["after_s2"]["qdiscs"][dev]
    assert out["after_s2_sockops"] == [out["s1_sockops"]]
    assert not any("/s2" in p for p in out["after_s2"]["pins"])
    # a failed load: refused, the first agent untouched, the other tool's pin untouched
    assert out["s3_rc"] != 0 and "exists already" in out["s3_err"]
    assert "Traceback" not in out["s3_err"]
    for dev in ("h0", "h1"):
        assert len(_ours(out["after_s3"]["filters"][dev], p1)) == 1
    assert out["after_s3_sockops"] == [out["s1_sockops"]]
    assert "/sys/fs/bpf/tpcstudy/s3/theirs" in out["after_s3"]["pins"]
    assert "/sys/fs/bpf/tpcstudy/s1/tpc_egress" in out["after_s3"]["pins"]
    assert "cg3" not in out["after_s3"]["cgroups"]
    assert out["after_s3"]["records"] == ["s1.json"]
    assert out["status_rc"] == 0
    # and the first unloads completely; the other tool's pin stays
    assert out["s1_unload"] == 0
    assert out["end"]["pins"] == ["/sys/fs/bpf/tpcstudy", "/sys/fs/bpf/tpcstudy/s3",
                                  "/sys/fs/bpf/tpcstudy/s3/theirs"]
    assert out["end"]["cgroups"] == []  # cg was made by s1 (s2 found it there)
    assert out["end"]["filters"] == {"h0": [], "h1": []}
    assert out["end"]["records"] == [] and out["end"]["tmp"] == []


_KILLS = r"""
# each kill waits for one moment of the load, seen in its record (polled every millisecond)
TARGETS = [
    ("python start-up", None),
    ("record created", lambda r: True),
    ("parent cgroup recorded", lambda r: len(r["cgroups_created"]) >= 1),
    ("cgroup made", lambda r: len(r["cgroups_created"]) >= 2 and r["cgroups_created"][-1][1]),
    ("pin folder recorded", lambda r: r["pin_dir"]),
    ("pin folder made", lambda r: r["pin_dir_ino"]),
    ("programs loaded", lambda r: r["prog_ids"]),
    ("table filled", lambda r: r["generation"] == 1),
    ("first tc step", lambda r: r["clsact_created"] or r["filters"]),
    ("second filter", lambda r: len(r["filters"]) >= 2),
]
OUT["runs"] = []
for i, (what, pred) in enumerate(TARGETS[:ARGS["kills"]]):
    name = f"k{i}"
    path = Path(os.environ["TPCSTUDY_RUN_DIR"]) / "agent" / f"{name}.json"
    p = subprocess.Popen([sys.executable, "-m", "tpcstudy", "agent", "load", "--table", TABLE,
                          "--host", "Chicago", "--cgroup", str(BASE / "a" / f"b{i}"),
                          "--name", name], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    hit = False
    while pred is not None and p.poll() is None and time.monotonic() - t0 < 30:
        try:
            r = json.loads(path.read_text())
        except (OSError, ValueError):
            r = None
        if r is not None and pred(r):
            hit = True
            break
        time.sleep(0.001)
    if pred is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    rec = record(name)
    st = cli("agent", "status")
    listed = name in st.stdout
    un = cli("agent", "unload", name) if rec is not None else None
    OUT["runs"].append({"target": what, "hit": hit or pred is None, "at": rec and rec["state"],
        "listed": listed, "status_rc": st.returncode, "unload_rc": un and un.returncode,
        "unload_out": un and (un.stdout + un.stderr)[:2000], "left": state()})
"""


def test_ten_kills_during_load_then_unload_leave_nothing(table):
    """SIGKILL at ten moments of ``agent load``, each one step of it (from Python's start-up to
    the second tc filter, seen in the record): ``status`` lists the record when one was
    written, ``unload NAME`` removes everything, and no pin, cgroup, filter, clsact qdisc,
    record or temporary folder is left."""
    out = run(_KILLS, table, kills=10, timeout=600)
    for r in out["runs"]:
        left = r["left"]
        said = (r["unload_out"] or "").partition("removed ")[2].strip()
        kinds = [x.split(" on ")[0].split(" /")[0] if not x.startswith("/") else "pin"
                 for x in said.split(", ")] if said and not said.startswith("nothing") else []
        print(f"{r['target']:>24}: record {r['at'] or 'none'}; unload removed "
              + (", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds)) or "nothing")
              + "; left: nothing")
        assert r["hit"], r  # the load reached that step before it was killed
        assert left["pins"] == [], r
        assert left["cgroups"] == [], r
        assert left["filters"] == {"h0": [], "h1": []}, r
        assert all("clsact" not in q for q in left["qdiscs"].values()), r
        assert left["records"] == [] and left["tmp"] == [], r
        if r["at"] is not None:
            assert r["listed"] and r["unload_rc"] == 0, r
    assert sum(r["at"] is not None for r in out["runs"]) == 9


_FORGED = r"""
# another tool's objects, under the names the issue's forged record used
subprocess.run(["bpftool", "map", "create", "/sys/fs/bpf/decoy_map", "type", "array", "key", "4",
                "value", "4", "entries", "1", "name", "decoy_map"], check=True)
os.makedirs("/sys/fs/bpf/othertool")
subprocess.run(["bpftool", "map", "create", "/sys/fs/bpf/othertool/m", "type", "array", "key",
                "4", "value", "4", "entries", "1", "name", "m"], check=True)
os.makedirs("/sys/fs/bpf/othertool/maps")
subprocess.run(["bpftool", "map", "create", "/sys/fs/bpf/othertool/maps/tpc_config", "type",
                "array",
                "key", "4", "value", "4", "entries", "1", "name", "theirs"], check=True)
(BASE / "decoy").mkdir()
subprocess.run(["tc", "qdisc", "add", "dev", "h0", "clsact"], check=True)
# another tool's tc program (this project's object, loaded by someone else: another id)
from tpcstudy.hostagent.program import object_for
subprocess.run(["bpftool", "prog", "loadall", str(object_for(1556)), "/sys/fs/bpf/othertool/p",
                "pinmaps", "/sys/fs/bpf/othertool/pm"], check=True)
subprocess.run(["tc", "filter", "add", "dev", "h0", "egress", "pref", "49", "handle", "1", "bpf",
                "direct-action", "pinned", "/sys/fs/bpf/othertool/p/tpc_egress"], check=True)
before = state()
d = Path(os.environ["TPCSTUDY_RUN_DIR"]) / "agent"
d.mkdir(parents=True)
cg = str(BASE / "decoy")
ino = os.stat("/sys/fs/bpf/othertool").st_ino
common = {"host": "Seattle", "table": "/t", "variant": "n_rto", "value_size": 1556,
          "entries": 1, "policy": "first", "mtu": 1500, "cgroup": cg, "netns": None,
          "interfaces": ["h0"], "private": False}
# the record format of before (pins listed, 'cgroup_created')
(d / "old.json").write_text(json.dumps(dict(common, name="old", cgroup_created=True,
    clsact_created=["h0"], pins=["/sys/fs/bpf/decoy_map", "/sys/fs/bpf/othertool/m"],
    dirs=["/sys/fs/bpf/othertool"], prog_ids={"tpc_sockops": 1, "tpc_egress": 2},
    map_ids={"dest_map": 3})))
# today's format, naming the other tool's folder (its real inode) and cgroup (a wrong inode)
(d / "othertool.json").write_text(json.dumps(dict(common, name="othertool", state="loaded",
    pin_dir="/sys/fs/bpf/othertool", pin_dir_ino=ino, cgroups_created=[[cg, 12345]],
    clsact_created=["h0"], filters=[{"dev": "h0", "handle": 1}],
    prog_ids={"tpc_sockops": 1, "tpc_egress": 2}, map_ids={"dest_map": 3})))
OUT["old"] = [cli("agent", "unload", "old").returncode]
OUT["new"] = cli("agent", "unload", "othertool").stdout
OUT["before"], OUT["after"] = before, state()
OUT["decoy"] = (BASE / "decoy").is_dir()
"""


def test_a_forged_record_removes_nothing_foreign(table):
    out = run(_FORGED, table)
    b, a = out["before"], out["after"]
    assert a["pins"] == b["pins"]  # decoy_map, othertool/m, othertool/tpc_config all kept
    assert "/sys/fs/bpf/decoy_map" in a["pins"] and "/sys/fs/bpf/othertool/m" in a["pins"]
    assert "/sys/fs/bpf/othertool/maps/tpc_config" in a["pins"]  # our name, not our map
    assert out["decoy"] and a["cgroups"] == ["decoy"]
    assert a["filters"]["h0"] == b["filters"]["h0"] and a["filters"]["h0"]
    assert "clsact" in a["qdiscs"]["h0"]
    assert "removed nothing" in out["new"]


_PARENTS = r"""
(BASE / "keep").mkdir()
r = cli("agent", "load", "--table", TABLE, "--host", "Chicago", "--cgroup",
        str(BASE / "keep" / "a" / "b"), "--name", "p1")
assert r.returncode == 0, r.stderr
OUT["loaded"] = state()
# one broken record beside the live agent: status still shows it
(Path(os.environ["TPCSTUDY_RUN_DIR"]) / "agent" / "zz.json").write_text("[")
st = cli("agent", "status")
OUT["status"] = [st.returncode, st.stdout]
(Path(os.environ["TPCSTUDY_RUN_DIR"]) / "agent" / "zz.json").unlink()
# two updates at once: one after the other (they share the standby)
ups = [subprocess.Popen([sys.executable, "-m", "tpcstudy", "agent", "update", "p1", "--table",
                         TABLE, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True) for _ in range(2)]
OUT["updates"] = [[p.wait(), json.loads(p.communicate()[0] or "null")] for p in ups]
js = cli("agent", "status", "p1", "--json")
OUT["status_json"] = json.loads(js.stdout)["p1"]
u = cli("agent", "unload", "p1")
OUT["unload"] = [u.returncode, u.stdout]
OUT["end"] = state()
"""


def test_unload_removes_the_parents_load_created_and_only_them(table):
    out = run(_PARENTS, table)
    assert out["loaded"]["cgroups"] == ["keep", "keep/a", "keep/a/b"]
    rc, text = out["status"]
    assert rc == 1 and "p1 (Chicago, 4 destinations" in text and "zz: " in text
    (rc1, u1), (rc2, u2) = out["updates"]
    assert rc1 == rc2 == 0 and sorted([u1["generation"], u2["generation"]]) == [2, 3]
    st = out["status_json"]
    assert st["generation"] == 3 and st["entries"] == 4 and st["updates"] == 2
    assert set(st["prog_ids"]) == {"tpc_sockops", "tpc_egress", "tpc_probe"}
    assert st["table_map_id"] in st["map_ids"].values() and st["swap_ms"] is not None
    assert out["unload"][0] == 0
    assert out["end"]["cgroups"] == ["keep"]  # a/b and a were the load's; keep was not
    assert out["end"]["pins"] == [] and out["end"]["filters"] == {"h0": [], "h1": []}
