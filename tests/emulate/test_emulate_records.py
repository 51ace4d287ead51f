"""Run records are data, read as root: ``clean`` judges each alone, refuses a prefix it does not
make, pids <= 1, processes without a start time, records of another pid namespace, never waits on
a FIFO, and still cleans a valid dead run beside them (no root: fake namespace and kill calls)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network import lifecycle as L


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _write(folder, name, doc):
    (folder / f"{name}.json").write_text(json.dumps(doc) if not isinstance(doc, str) else doc)


def test_forged_records_are_refused_and_a_dead_run_still_cleaned(tmp_path, monkeypatch):
    monkeypatch.setenv("TPCSTUDY_NETNS_TAG", "tpc")
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = _dead_pid()
        good = "tpcabc123-"
        _write(tmp_path, good.rstrip("-"), {"prefix": good, "pid": dead, "pid_start": 5,
                                            "processes": [{"pid": victim.pid}]})  # no start
        forged = {"x": {"prefix": "", "pid": dead},
                  "victim": {"prefix": "victim", "pid": dead},
                  "tpc": {"prefix": "tpc-", "pid": dead},
                  "tpcabc124": {"prefix": "tpcabc124-", "pid": 0},
                  "tpcabc125": {"prefix": "tpcabc125-", "pid": -1},
                  "tpcabc126": {"prefix": "tpcabc126-", "pid": "abc"},
                  "tpcabc127": {"prefix": "tpcabc127-", "pid": dead, "processes": ["x"]},
                  "tpcabc128": {"prefix": "tpcabc129-", "pid": dead},  # name and prefix differ
                  "notjson": "{nope"}
        for name, doc in forged.items():
            _write(tmp_path, name, doc)
        os.mkfifo(tmp_path / "fifo.json")  # would block a plain read forever
        _write(tmp_path, "tpcabc12a", {"prefix": "tpcabc12a-", "pid": dead, "pidns": 12345})
        existing = ["tpcabc123-r0", "tpcabc123-r1", "tpcabc12a-r0", "victim-r0", "tpc-r0",
                    "other"]
        deleted, killed = [], []

        def delete(names):
            deleted.extend(names)
            for n in names:
                existing.remove(n)

        t0 = time.monotonic()
        reports = L.clean(where=tmp_path, list_namespaces=lambda p: [n for n in existing
                                                                      if n.startswith(p)],
                          delete_namespaces=delete, kill=lambda pid, sig: killed.append(pid))
        assert time.monotonic() - t0 < 5  # the FIFO was not waited on
        assert sorted(deleted) == ["tpcabc123-r0", "tpcabc123-r1"]  # only the valid dead run's
        assert killed == []  # the process without a start time is not provably the run's
        assert victim.poll() is None
        skipped = {os.path.basename(r["file"]): r["skipped"] for r in reports if "skipped" in r}
        assert set(skipped) == {f"{n}.json" for n in forged} | {"fifo.json"}
        assert "is not one this tool makes" in skipped["x.json"]
        assert "is not a process id > 1" in skipped["tpcabc124.json"]
        assert "does not match its prefix" in skipped["tpcabc128.json"]
        assert "not a regular file" in skipped["fifo.json"]
        other = next(r for r in reports if r.get("prefix") == "tpcabc12a-")
        assert other["alive"] == "unknown" and "tpcabc12a-r0" in existing
        assert not (tmp_path / "tpcabc123.json").exists()  # cleaned: its record goes
        assert (tmp_path / "tpcabc12a.json").exists()  # left alone: its record stays
    finally:
        victim.kill()
        victim.wait()


def test_a_run_whose_namespaces_keep_coming_keeps_its_record(tmp_path, monkeypatch):
    """An orphaned build adding namespaces after clean listed them: clean lists again after
    deleting, and keeps the record while any is left."""
    monkeypatch.setenv("TPCSTUDY_NETNS_TAG", "tpc")
    _write(tmp_path, "tpcabc123", {"prefix": "tpcabc123-", "pid": _dead_pid(), "pid_start": 1})
    waves = [["tpcabc123-r0"], ["tpcabc123-r1"], ["tpcabc123-r2"]]
    live = list(waves.pop(0))

    def listing(p):
        return [n for n in live if n.startswith(p)]

    def delete(names):
        for n in names:
            live.remove(n)
        if waves:
            live.extend(waves.pop(0))  # the orphan adds more meanwhile

    rep = L.clean(where=tmp_path, list_namespaces=listing, delete_namespaces=delete,
                  kill=lambda *a: None)[0]
    assert rep["namespaces_removed"] == ["tpcabc123-r0", "tpcabc123-r1", "tpcabc123-r2"]
    assert live == [] and not (tmp_path / "tpcabc123.json").exists()
    # one that never stops: the record stays for the next clean
    _write(tmp_path, "tpcabc124", {"prefix": "tpcabc124-", "pid": _dead_pid(), "pid_start": 1})
    counter = iter(range(10**6))
    rep = L.clean(where=tmp_path, list_namespaces=lambda p: [f"tpcabc124-r{next(counter)}"],
                  delete_namespaces=lambda n: None, kill=lambda *a: None)[0]
    assert rep["left"] and (tmp_path / "tpcabc124.json").exists()


def test_records_carry_the_pid_namespace_and_the_run_dir_is_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TPCSTUDY_RUN_DIR", "relative/runs")
    assert L.run_dir() == tmp_path / "relative" / "runs"
    assert L.pid_namespace() == os.stat("/proc/self/ns/pid").st_ino
    assert N.process_alive(os.getpid())
