#!/usr/bin/env python
"""``tpcstudy agent update`` timed on a real table, beside the way a table was rewritten before
(``bpftool batch file`` of the export's batch: entries written one by one into the map in use,
not atomic).

Root only. The script runs itself again in new network and mount namespaces with a fresh bpffs
and one veth pair, loads the agent for one host of ``--table`` (cgroup
``tpcstudy-bench-<pid>``, removed at the end), then runs ``agent update`` ``--repeat`` times,
alternating ``--table`` and ``--table2`` (default: the same table), and prints per update the
swap (one map update), the update (the standby filled and swapped: the new table in use), the
cleanup after it (RCU grace period, the old table emptied), the table read and checked before,
and the command's wall time; then the medians and bpftool's in-place rewrite beside them.

    tpcstudy export --topo zoo/Kdl --format bpf --paths 8 --out /tmp/Kdl
    python benchmarks/agent_update.py --table /tmp/Kdl --host Akron --repeat 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tpcstudy", *args], capture_output=True,
                          text=True, timeout=300)


def inside(args: argparse.Namespace) -> int:
    from tpcstudy.hostagent.loader import read_table
    from tpcstudy.linux import CGROUP_ROOT

    subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], check=True)
    subprocess.run(["ip", "link", "add", "b0", "type", "veth", "peer", "name", "b1"], check=True)
    for d in ("b0", "b1", "lo"):
        subprocess.run(["ip", "link", "set", d, "up"], check=True)
    cg = CGROUP_ROOT / f"tpcstudy-bench-{os.getpid()}"
    r = _cli("agent", "load", "--table", args.table, "--host", args.host, "--cgroup", str(cg),
             "--name", "bench", "--interfaces", "b0")
    if r.returncode:
        print(r.stderr, file=sys.stderr)
        return 1
    try:
        entries = len(read_table(Path(args.table), args.host)[1])
        print(f"{args.host} of {args.table}: {entries} destinations x 8 slots "
              f"(1556-byte values)")
        rows = []
        for i in range(args.repeat):
            t = args.table2 if i % 2 == 0 else args.table
            t0 = time.perf_counter()
            u = _cli("agent", "update", "bench", "--table", t, "--json")
            wall = (time.perf_counter() - t0) * 1e3
            if u.returncode:
                print(u.stderr, file=sys.stderr)
                return 1
            d = json.loads(u.stdout)
            rows.append((d["swap_ms"], d["update_ms"], d["cleanup_ms"], d["read_ms"], wall))
            print(f"  update {i + 1:>2}: generation {d['generation']}, swap "
                  f"{d['swap_ms']:.4f} ms, update {d['update_ms']:.3f} ms, cleanup "
                  f"{d['cleanup_ms']:.2f} ms, read {d['read_ms']:.1f} ms, command {wall:.0f} ms")
        med = [statistics.median(x[i] for x in rows) for i in range(5)]
        # the peer: the export's batch file into a map of the same layout, in place
        batch = next(Path(args.table).glob("bpf-*/")) / f"{args.host.replace(' ', '_')}.batch"
        pin = next(ln.split()[3] for ln in batch.read_text().splitlines()
                   if ln.startswith("map update pinned"))
        os.makedirs(os.path.dirname(pin), exist_ok=True)
        subprocess.run(["bpftool", "map", "create", pin, "type", "hash", "key", "8", "value",
                        "1556", "entries", "1024", "name", "dest_map"], check=True)
        peer = []
        for _ in range(max(3, args.repeat // 4)):
            t0 = time.perf_counter()
            subprocess.run(["bpftool", "batch", "file", str(batch)], check=True,
                           capture_output=True)
            peer.append((time.perf_counter() - t0) * 1e3)
        os.unlink(pin)
        p = statistics.median(peer)
        print(f"medians over {len(rows)} updates: swap {med[0]:.4f} ms, update {med[1]:.3f} ms "
              f"(max {max(x[1] for x in rows):.3f}), cleanup {med[2]:.2f} ms, read and check "
              f"{med[3]:.1f} ms, command {med[4]:.0f} ms")
        print(f"bpftool batch file (in place, not atomic): {p:.1f} ms; update / bpftool = "
              f"{med[1] / p:.3f}")
    finally:
        u = _cli("agent", "unload", "bench")
        if u.returncode:
            print(u.stderr, file=sys.stderr)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", required=True)
    ap.add_argument("--table2", default=None)
    ap.add_argument("--host", required=True)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.table2 = args.table2 or args.table
    if args.inside:
        return inside(args)
    if os.geteuid() != 0:
        print("agent_update.py needs root (BPF, cgroups, namespaces)", file=sys.stderr)
        return 2
    run = os.path.join("/tmp", f"tpcstudy-bench-run-{os.getpid()}")
    env = dict(os.environ, TPCSTUDY_RUN_DIR=run)
    r = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private",
                        sys.executable, __file__, *sys.argv[1:], "--inside"], env=env)
    subprocess.run(["rm", "-rf", "--one-file-system", run])
    return r.returncode


if __name__ == "__main__":
    raise SystemExit(main())
