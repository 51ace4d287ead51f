"""How fast the emulator builds and tears down networks (needs root).

For each topology, side by side in one run:

- **batch**: what ``tpcstudy emulate`` does (one ``ip -batch`` for the namespaces, one for the
  veths, one ``ip -n NS -batch`` and one ``tc -n NS -batch`` per router, 4 in parallel; sysctls
  written in-process);
- **naive** (the reference): the same commands, one ``ip``/``tc``/``sysctl`` process each, as a
  shell script would run them (only up to ``--naive-max-routers`` routers: Cogentco's 44,000
  routes take minutes this way).

Prints median seconds over ``--repeat`` runs, the ratio, the kernel memory the network holds
(MemAvailable before and after the build, per router), and this process's peak RSS.

    python benchmarks/emulate.py                      # Abilene, Geant2012, Cogentco
    python benchmarks/emulate.py --topo zoo/Kdl --repeat 1
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import time
from typing import List

import tpcstudy
from tpcstudy.emulate.network import kernel as N
from tpcstudy.emulate.network.lifecycle import Emulation, new_prefix
from tpcstudy.emulate.network.spec import Batch, Sysctls, build_steps, network_spec


def mem_available_kib() -> int:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


def batch_run(topo: tpcstudy.Topology) -> tuple:
    spec = network_spec(topo, prefix=new_prefix(), link_mbps=2)
    m0 = mem_available_kib()
    emu = Emulation(spec)
    emu.__enter__()
    mem = (m0 - mem_available_kib()) / 1024.0
    emu.close()
    return emu.build_seconds, emu.teardown_seconds, mem


def naive_run(topo: tpcstudy.Topology) -> tuple:
    spec = network_spec(topo, prefix=new_prefix(), link_mbps=2)
    t0 = time.perf_counter()
    try:
        for phase in build_steps(spec):
            for st in phase:
                if isinstance(st, Batch):
                    for line in st.lines:
                        argv = [st.tool] + (["-n", st.netns] if st.netns else []) + line.split()
                        subprocess.run(argv, check=True, capture_output=True)
                elif isinstance(st, Sysctls):
                    subprocess.run(["ip", "netns", "exec", st.netns, "sysctl", "-qw",
                                    *[f"{k}={v}" for k, v in st.values]], check=True,
                                   capture_output=True)
        t1 = time.perf_counter()
    finally:
        t2 = time.perf_counter()
        for name in N.list_namespaces(spec.prefix):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return t1 - t0, time.perf_counter() - t2


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topo", action="append",
                    help="topologies (default zoo/Abilene, zoo/Geant2012, zoo/Cogentco)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--naive-max-routers", type=int, default=40)
    args = ap.parse_args(argv)
    from tpcstudy.emulate.network.checks import require

    require()
    specs = args.topo or ["zoo/Abilene", "zoo/Geant2012", "zoo/Cogentco"]
    print(f"{'topology':>12} {'routers':>7} {'links':>5} {'routes':>6} {'batch build':>11} "
          f"{'teardown':>8} {'naive build':>11} {'ratio':>6} {'kernel MiB':>10} {'/router':>7}")
    for s in specs:
        topo = tpcstudy.prune(tpcstudy.read_topology(s))
        routes = sum(len(r.routes) for r in network_spec(topo, prefix="tpcbench0-").routers)
        runs = [batch_run(topo) for _ in range(args.repeat)]
        b = statistics.median(r[0] for r in runs)
        td = statistics.median(r[1] for r in runs)
        mem = statistics.median(r[2] for r in runs)
        if topo.num_nodes <= args.naive_max_routers:
            naive = statistics.median(naive_run(topo)[0] for _ in range(args.repeat))
            nv, ratio = f"{naive:>10.2f}s", f"{naive / b:>5.0f}x"
        else:
            nv, ratio = f"{'skipped':>11}", f"{'':>6}"
        print(f"{topo.name:>12} {topo.num_nodes:>7} {topo.num_links:>5} {routes:>6} {b:>10.2f}s "
              f"{td:>7.2f}s {nv} {ratio} {mem:>10.1f} {mem / topo.num_nodes:>7.2f}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {rss:.0f}"
          f" MiB; teardown = 'ip netns del' (the kernel frees namespaces asynchronously)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
