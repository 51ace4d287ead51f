"""Options and argument parsing shared by the verbs."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Iterable, List, Optional, Set, Tuple, TypeVar

from tqdm import tqdm

from ..errors import UsageError
from ..io import ZOO
from ..io.specs import data_spec
from ..rules import CAPACITY_RULES, WEIGHT_RULES
from ..study.executors import EXECUTORS

__all__ = ["add_topology_options", "apply_mirror", "add_executor_options", "parse_list",
           "parse_k_list", "progress"]

T = TypeVar("T")


def add_topology_options(p: argparse.ArgumentParser, *, topo_required: bool = True) -> None:
    """``--topo``, ``--capacity``, ``--weight`` and ``--mirror``."""
    p.add_argument("--topo", required=topo_required, metavar="SPEC",
                   help="a topology file (.gml, .graphml, .graph), a folder, a glob, 'zoo' (the "
                        "whole Topology Zoo, fetched on first use), 'zoo/NAME', "
                        "'repetita/inverse-capacity' or 'repetita/unary' (REPETITA's Zoo "
                        "instances, fetched on first use), 'repetita/inverse-capacity/NAME'")
    p.add_argument("--capacity", choices=CAPACITY_RULES, default="uniform",
                   help="link capacities: uniform 1.0 (default), the Zoo's LinkSpeedRaw, or the "
                        "file's own (REPETITA)")
    p.add_argument("--weight", choices=WEIGHT_RULES, default="hop",
                   help="IGP weights: hop (default), inverse-capacity, great-circle distance, or "
                        "the file's own (REPETITA)")
    p.add_argument("--mirror", metavar="DIR",
                   help="a local mirror of the data set --topo names (Topology Zoo: a folder of "
                        "NAME.gml or gml.tar.gz, or an http(s) folder URL; REPETITA: a folder "
                        "with its data/ layout); same as TPCSTUDY_ZOO_MIRROR / "
                        "TPCSTUDY_REPETITA_MIRROR")


def apply_mirror(args: argparse.Namespace) -> None:
    """Make ``--mirror`` the mirror of the data set ``--topo`` names (default: the Zoo), for
    this process and the workers it starts."""
    if getattr(args, "mirror", None):
        named = data_spec(args.topo) if getattr(args, "topo", None) else None
        dataset = named[0] if named is not None else ZOO
        os.environ[dataset.mirror_env] = args.mirror


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """``--jobs``, ``--executor`` and ``--scheduler``."""
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--executor", choices=EXECUTORS, default=None,
                        help="where tasks run: local (this process, one at a time), process "
                             "(--jobs worker processes), dask (a Dask cluster: --scheduler, or a "
                             "local cluster of --jobs workers); default: local for --jobs 1, "
                             "process for more, dask with --scheduler")
    parser.add_argument("--scheduler", default=None, metavar="ADDR",
                        help="Dask scheduler address (tcp://HOST:8786) or scheduler JSON file; "
                             "workers need tpcstudy and the topology files at the same paths")


def parse_list(text: str, kind: Callable[[str], T], what: str) -> List[T]:
    """A comma-separated list of ``kind`` values (``"1,5,10"``)."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            out.append(kind(part))
        except ValueError:
            raise UsageError(f"{what}: {part!r} is not a "
                             f"{getattr(kind, '__name__', 'value')}") from None
    if not out:
        raise UsageError(f"{what}: empty list")
    return out


def parse_k_list(text: str) -> Tuple[int, ...]:
    """``"1-6"``, ``"1,2,4"`` or ``"1-3,6"`` -> sorted distinct segment limits (each >= 1)."""
    out: Set[int] = set()
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if lo > hi:
                    raise ValueError
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise UsageError(f"--k {text!r}: expected a list like 1-6 or 1,2,4") from None
    if not out or min(out) < 1:
        raise UsageError(f"--k {text!r}: segment limits must be integers >= 1")
    return tuple(sorted(out))


def progress(iterable: Iterable[T], total: Optional[int], desc: str, enabled: bool) -> Any:
    """A tqdm bar on stderr over ``iterable`` (only on a terminal), or the iterable itself."""
    if not enabled:
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit="topo", file=sys.stderr, leave=False,
                disable=None)
