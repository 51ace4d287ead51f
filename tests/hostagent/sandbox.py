"""A private place for the agent's root tests: a driver script run by ``unshare`` in new network,
mount, pid and cgroup namespaces with a fresh bpffs on /sys/fs/bpf, two veth pairs up, its own
run-record and temporary folders, and one cgroup folder of its own under the cgroup v2 root.
Everything it makes goes with it (the namespaces), and the cgroup folder is removed after it,
whatever happened; :func:`run` fails the test if anything of it is left."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict

import pytest

REQUIRED = os.environ.get("TPCSTUDY_EMULATE_REQUIRED") == "1"

PRELUDE = r"""
import json, os, signal, subprocess, sys, time
from pathlib import Path
ARGS = json.loads(sys.argv[1])
subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], check=True)
for a, b in (("h0", "p0"), ("h1", "p1")):
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    for d in (a, b):
        subprocess.run(["ip", "link", "set", d, "up"], check=True)
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
BASE = Path(ARGS["base"])
TABLE = ARGS["table"]
OUT = {}

def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "tpcstudy", *args], capture_output=True,
                          text=True, timeout=timeout)

def pins():
    return sorted(str(p) for p in Path("/sys/fs/bpf").rglob("*")
                  if p.name not in ("progs.debug", "maps.debug"))

def filters(dev, where="egress"):
    r = subprocess.run(["tc", "-j", "filter", "show", "dev", dev, where], capture_output=True,
                       text=True)
    out = []
    for f in json.loads(r.stdout or "[]"):
        o = f.get("options") or {}
        if o:
            out.append({"pref": f.get("pref"), "kind": f.get("kind"), "handle": o.get("handle"),
                        "prog": (o.get("prog") or {}).get("id")})
    return out

def qdiscs(dev):
    r = subprocess.run(["tc", "-j", "qdisc", "show", "dev", dev], capture_output=True, text=True)
    return [q.get("kind") for q in json.loads(r.stdout or "[]")]

def cgroups():
    return sorted(str(p.relative_to(BASE)) for p in BASE.rglob("*") if p.is_dir())

def sockops(cg):
    r = subprocess.run(["bpftool", "-j", "cgroup", "show", str(cg)], capture_output=True,
                       text=True)
    return [p.get("id") for p in json.loads(r.stdout or "[]")] if r.returncode == 0 else []

def record(name):
    p = Path(os.environ["TPCSTUDY_RUN_DIR"]) / "agent" / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else None

def state():
    return {"pins": pins(), "cgroups": cgroups(),
            "filters": {d: filters(d) for d in ("h0", "h1")},
            "qdiscs": {d: qdiscs(d) for d in ("h0", "h1")},
            "records": sorted(os.listdir(Path(os.environ["TPCSTUDY_RUN_DIR"]) / "agent"))
            if (Path(os.environ["TPCSTUDY_RUN_DIR"]) / "agent").is_dir() else [],
            "tmp": sorted(os.listdir(os.environ["TMPDIR"]))}
"""


def need_root() -> None:
    ok = os.geteuid() == 0 and shutil.which("bpftool") and shutil.which("unshare")
    if not ok:
        if REQUIRED:
            pytest.fail("the agent's root tests need root, bpftool and unshare "
                        "(TPCSTUDY_EMULATE_REQUIRED=1)")
        pytest.skip("needs root, bpftool and unshare")


def _cgroup_root() -> Path:
    from tpcstudy.linux import CGROUP_ROOT

    return CGROUP_ROOT


def _rm_tree(p: Path) -> None:
    for d in sorted((x for x in p.rglob("*") if x.is_dir()), key=lambda x: -len(x.parts)):
        try:
            d.rmdir()
        except OSError:
            pass
    try:
        p.rmdir()
    except OSError:
        pass


def run(body: str, table: Path, timeout: float = 300, **extra: Any) -> Dict[str, Any]:
    """Run ``PRELUDE + body`` in the sandbox; ``body`` fills ``OUT`` (printed as JSON)."""
    need_root()
    base = _cgroup_root() / f"tpcstudy-test-{secrets.token_hex(3)}"
    base.mkdir()
    run_dir = Path(tempfile.mkdtemp(prefix="tpcstudy-agent-test-"))
    tmp = run_dir / "tmp"
    tmp.mkdir()
    args = dict(extra, base=str(base), table=str(table))
    script = PRELUDE + body + "\nprint('RESULT ' + json.dumps(OUT))\n"
    env = dict(os.environ, TPCSTUDY_RUN_DIR=str(run_dir / "run"), TMPDIR=str(tmp),
               PYTHONSAFEPATH="1")
    try:
        p = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "--pid",
                            "--fork", "--mount-proc", "--cgroup", sys.executable, "-c", script,
                            json.dumps(args)], capture_output=True, text=True, env=env,
                           timeout=timeout)
        assert p.returncode == 0, p.stderr[-4000:] + p.stdout[-2000:]
        line = next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT "))
        return dict(json.loads(line[7:]), _log=p.stdout[-4000:])
    finally:
        left = sorted(str(x.relative_to(base)) for x in base.rglob("*") if x.is_dir())
        _rm_tree(base)
        shutil.rmtree(run_dir, ignore_errors=True)
        assert not base.exists(), f"cgroups left in {base}"
        if left:
            print(f"sandbox: cgroups left and removed: {left}")
