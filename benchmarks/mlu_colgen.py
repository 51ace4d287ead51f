#!/usr/bin/env python
"""tpcstudy.models.mlu's column generation against an earlier version of it, side by side on REPETITA
instances: the same MLU (relative 1e-6) and the time of each, interleaved (per instance and
model the two run one after the other, in an order that alternates), each in one process.

The earlier version is read from git (``--before``, default the commit before the key-path LP:
the plain arc-path LP with one row per demand) and loaded as ``tpcstudy._mlu_before``, so it
runs on the same installed core.

    python benchmarks/mlu_colgen.py GtsCe Cogentco Ion        # ecmp, sr2, sr4, mcf
    python benchmarks/mlu_colgen.py --largest 5 --models sr2,mcf --out /tmp/mlu.csv

REPETITA is found the way the product finds it (installed, or TPCSTUDY_REPETITA_MIRROR).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
#: The last commit with the plain LP (one row per demand).
BEFORE = "f8de5f2"


def load_before(rev: str) -> ModuleType:
    """``src/tpcstudy/mlu.py`` as it was at ``rev``, as a module of the installed package
    (``tpcstudy._mlu_before``: its relative imports resolve in ``tpcstudy``)."""
    import tpcstudy  # noqa: F401  (the package first, for the relative imports)

    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/tpcstudy/mlu.py"],
                          check=True, capture_output=True, text=True).stdout
    name = "tpcstudy._mlu_before"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "tpcstudy"
    sys.modules[name] = mod
    exec(compile(text, f"{rev}:src/tpcstudy/mlu.py", "exec"), mod.__dict__)
    return mod


def parse_models(text: str) -> List[tuple]:
    out = []
    for m in text.split(","):
        m = m.strip()
        out.append(("sr", int(m[2:])) if m.startswith("sr") else (m, 1))
    return out


def main(argv: Any = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="instances (e.g. GtsCe)")
    p.add_argument("--largest", type=int, default=0, help="the N instances with most demands")
    p.add_argument("--models", default="ecmp,sr2,sr4,mcf")
    p.add_argument("--before", default=BEFORE, help="git revision of the earlier mlu.py")
    p.add_argument("--weights", choices=("inverse-capacity", "unary"), default="inverse-capacity")
    p.add_argument("--out", help="write one row per instance, model and version (CSV)")
    args = p.parse_args(argv)

    from tpcstudy import read_topology
    from tpcstudy.io import read_demands, topology_files
    from tpcstudy.models import mlu as after

    before = load_before(args.before)
    files = {f.stem: f for f in topology_files(f"repetita/{args.weights}")}
    names = list(args.names)
    if args.largest:
        size = {n: f.with_name(f"{n}.0000.demands").stat().st_size for n, f in files.items()
                if f.with_name(f"{n}.0000.demands").is_file()}
        names += sorted(size, key=lambda n: -size[n])[:args.largest]
    rows: List[Dict[str, Any]] = []
    flip = False
    total = {"before": 0.0, "after": 0.0}
    for name in names:
        f = files[name]
        topo = read_topology(f, capacity="file", weight="file")
        dem = read_demands(f.with_name(f"{name}.0000.demands"), topo)
        for model, k in parse_models(args.models):
            label = f"sr{k}" if model == "sr" else model
            got = {}
            order = [("before", before), ("after", after)]
            for version, mod in (order[::-1] if flip else order):
                t0 = time.perf_counter()
                r = mod.min_mlu(topo, dem, model=model, k=k)
                sec = time.perf_counter() - t0
                total[version] += sec
                got[version] = (r.mlu, sec, r.columns, r.iterations)
                rows.append({"topology": name, "model": label, "version": version,
                             "mlu": r.mlu, "seconds": round(sec, 3), "columns": r.columns,
                             "iterations": r.iterations})
            flip = not flip
            (mb, sb, cb, ib), (ma, sa, ca, ia) = got["before"], got["after"]
            same = abs(ma - mb) <= 1e-6 * abs(mb) or ma == mb
            print(f"{name:>14} {label:>9}: before {sb:8.2f} s ({cb} cols, {ib} rounds)  "
                  f"after {sa:7.2f} s ({ca} cols, {ia} rounds)  x{sb / max(sa, 1e-9):6.1f}  "
                  f"MLU {mb:.9f} {ma:.9f} {'same' if same else 'DIFFERENT'}", flush=True)
    print(f"total: before {total['before']:.1f} s, after {total['after']:.1f} s")
    if args.out and rows:
        with open(args.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
