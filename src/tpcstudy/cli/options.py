"""Options and argument parsing shared by the verbs."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from typing import Any, Callable, Dict, Iterable, List, NoReturn, Optional, Tuple, TypeVar

from ..errors import UsageError
from ..io import ZOO
from ..io.specs import data_spec
from ..paths import MAX_K
from ..rules import CAPACITY_RULES, LINK_RULES, WEIGHT_RULES
from ..study.executors import EXECUTORS

__all__ = ["add_topology_options", "split_topo", "topo_specs", "apply_mirror",
           "add_executor_options", "checked_jobs", "parse_list", "parse_k_list", "progress",
           "add_output_options", "print_study_json", "next_steps", "out_slug", "add_out_option",
           "resolve_out", "finish_study", "Help", "RawHelp", "Parser", "deprecated_alias",
           "checked_seeds", "MAX_SEEDS", "add_controller_options"]

T = TypeVar("T")


class Help(argparse.HelpFormatter):
    """Every option's default in ``--help``, unless its help already names it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (not action.option_strings or "default" in text or "%(default)" in text
                or action.default in (None, False, argparse.SUPPRESS)
                or text == argparse.SUPPRESS):
            return text
        return text + " (default: %(default)s)"


class RawHelp(Help, argparse.RawDescriptionHelpFormatter):
    """:class:`Help` with the description printed as written (its own line breaks)."""


class Parser(argparse.ArgumentParser):
    """The command's parsers: defaults in ``--help`` (:class:`Help`) and one error prefix,
    ``tpcstudy: error:``, for a bad argument as for every other error (naming the verb)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("formatter_class") in (None, argparse.HelpFormatter):
            kwargs["formatter_class"] = Help
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        # descriptions are module docstrings: their reST ``literals`` read as plain text here
        return super().format_help().replace("``", "")

    def format_usage(self) -> str:
        return super().format_usage().replace("``", "")

    def error(self, message: str) -> "NoReturn":
        self.print_usage(sys.stderr)
        verb = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        self.exit(2, f"tpcstudy: error: {verb + ': ' if verb else ''}{message}\n")


def split_topo(text: str) -> List[str]:
    """A ``--topo`` value as the specs it names: ``zoo/Abilene,zoo/Geant2012`` is two, a file
    or folder whose name holds a comma is one."""
    if "," not in text or os.path.exists(text):
        return [text]
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"{text!r}: name a topology")
    return parts


def topo_specs(value: Any) -> List[str]:
    """``args.topo`` (a string, a list of them or None) as a list of specs."""
    if not value:
        return []
    return [os.fspath(value)] if isinstance(value, (str, os.PathLike)) else [str(v) for v in value]


class _Topo(argparse.Action):
    """``--topo``: repeated or a comma list adds topologies (several: a list, one: a string);
    with ``many=False`` a second topology is refused (never silently dropped)."""

    def __init__(self, *args: Any, many: bool = True, **kwargs: Any) -> None:
        self.many = many
        super().__init__(*args, **kwargs)

    def __call__(self, p: argparse.ArgumentParser, ns: argparse.Namespace, value: Any,
                 option: Optional[str] = None) -> None:
        try:
            specs = topo_specs(getattr(ns, self.dest, None)) + split_topo(str(value))
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        specs = list(dict.fromkeys(specs))
        if len(specs) > 1 and not self.many:
            raise argparse.ArgumentError(self, f"this command takes one topology; got "
                                               f"{', '.join(specs)}")
        setattr(ns, self.dest, specs[0] if len(specs) == 1 else specs)


def add_topology_options(p: argparse.ArgumentParser, *, topo_required: bool = True,
                         refuse_multigraph: str = "", many: bool = True,
                         auto_rules: Tuple[str, ...] = ()) -> None:
    """``--topo``, ``--capacity``, ``--weight``, ``--links`` and ``--mirror``.

    ``refuse_multigraph``: why this command cannot take ``--links multigraph`` (it is then
    refused, with that reason, as the command line is read). ``many``: ``--topo`` may be
    repeated or a comma list (``args.topo`` is then a list of specs); else one topology spec
    (a second is refused). ``auto_rules``: the words of a capacity and a weight rule ``auto``
    (the default then), resolved per topology by the command."""
    several = (" Repeat --topo or give a comma list for several (--topo zoo/Abilene,zoo/Geant2012)."
               if many else "")
    p.add_argument("--topo", required=topo_required, metavar="SPEC", action=_Topo, many=many,
                   help="a topology file (.gml, .graphml, .graph), a folder, a glob, 'zoo' (the "
                        "whole Topology Zoo, fetched on first use), 'zoo/NAME', "
                        "'repetita/inverse-capacity' or 'repetita/unary' (REPETITA's Zoo "
                        "instances, fetched on first use), 'repetita/inverse-capacity/NAME'."
                        + several)
    if auto_rules:
        p.add_argument("--capacity", choices=("auto",) + CAPACITY_RULES, default="auto",
                       help=f"link capacities: auto (default: {auto_rules[0]}), uniform 1.0, the "
                            "Zoo's LinkSpeedRaw, or the file's own (REPETITA)")
        p.add_argument("--weight", choices=("auto",) + WEIGHT_RULES, default="auto",
                       help=f"IGP weights: auto (default: {auto_rules[1]}), hop, "
                            "inverse-capacity, great-circle distance, or the file's own")
    else:
        p.add_argument("--capacity", choices=CAPACITY_RULES, default="uniform",
                       help="link capacities: uniform 1.0 (default), the Zoo's LinkSpeedRaw, or "
                            "the file's own (REPETITA)")
        p.add_argument("--weight", choices=WEIGHT_RULES, default="hop",
                       help="IGP weights: hop (default), inverse-capacity, great-circle distance, "
                            "or the file's own (REPETITA)")
    def links_rule(text: str) -> str:
        if text not in LINK_RULES:
            raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from "
                                             f"{', '.join(LINK_RULES)})")
        if text == "multigraph" and refuse_multigraph:
            raise argparse.ArgumentTypeError(f"multigraph: {refuse_multigraph}")
        return text

    links_help = ("parallel links: merged into one (default; prune the simple graph's 2-core, "
                  "keep its largest component) or multigraph (each its own arc with its own "
                  "ECMP share; prune and find edge routers by link count, keep every "
                  "component: the TPC paper's topology set)")
    if refuse_multigraph:
        links_help = f"parallel links: merged into one, the only rule here ({refuse_multigraph})"
    p.add_argument("--links", type=links_rule, default="merged", metavar="{merged,multigraph}",
                   help=links_help)
    p.add_argument("--mirror", metavar="DIR",
                   help="a local mirror of the data set --topo names (Topology Zoo: a folder of "
                        "NAME.gml or gml.tar.gz, or an http(s) folder URL; REPETITA: a folder "
                        "with its data/ layout); same as TPCSTUDY_ZOO_MIRROR / "
                        "TPCSTUDY_REPETITA_MIRROR")


def apply_mirror(args: argparse.Namespace) -> None:
    """Make ``--mirror`` the mirror of the data set ``--topo`` names (default: the Zoo), for
    this process and the workers it starts."""
    if getattr(args, "mirror", None):
        specs = topo_specs(getattr(args, "topo", None))
        named = data_spec(specs[0]) if specs else None
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


def checked_jobs(args: argparse.Namespace) -> int:
    """``--jobs`` checked: >= 1, and at most the CPUs this process may use (a note on stderr
    when capped; a remote Dask cluster, ``--scheduler``, is not capped)."""
    jobs = int(args.jobs)
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: need at least 1")
    if getattr(args, "scheduler", None):
        return jobs
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if jobs > cpus:
        print(f"tpcstudy: note: --jobs {jobs} capped at {cpus}, the CPUs available here",
              file=sys.stderr)
        jobs = cpus
    args.jobs = jobs
    return jobs


#: Most draws ``--seeds`` asks for: each is a task per topology (the paper's figures use 20).
MAX_SEEDS = 10_000


def checked_seeds(count: int, first: int = 0) -> range:
    """``--seeds COUNT`` from ``--seed FIRST``: 1 to :data:`MAX_SEEDS` draws (a range: the
    seeds are never listed before they are known to be few)."""
    if count < 1:
        raise UsageError("--seeds must be >= 1")
    if count > MAX_SEEDS:
        raise UsageError(f"--seeds {count}: at most {MAX_SEEDS} draws (each is a task per "
                         "topology; the paper's figures use 20)")
    if first < 0:
        raise UsageError(f"--seed {first}: seeds are integers >= 0")
    return range(first, first + count)


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
    """``"1-6"``, ``"1,2,4"`` or ``"1-3,6"`` -> sorted distinct segment limits (1 to MAX_K)."""
    bounds = []
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        try:
            a, _, b = part.partition("-")
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise UsageError(f"--k {text!r}: expected a list like 1-6 or 1,2,4") from None
        if lo > hi:
            raise UsageError(f"--k {text!r}: {part} is an empty range")
        bounds.append((lo, hi))
    if not bounds or min(lo for lo, _ in bounds) < 1:
        raise UsageError(f"--k {text!r}: segment limits must be integers >= 1")
    if max(hi for _, hi in bounds) > MAX_K:  # before building a huge range
        raise UsageError(f"--k {text!r}: segment limits go up to {MAX_K} in the studies (a path a "
                         f"host is given has at most 9 segments: its SRH's 10 address slots less "
                         f"the kernel's)")
    return tuple(sorted({k for lo, hi in bounds for k in range(lo, hi + 1)}))


def progress(iterable: Iterable[T], total: Optional[int], desc: str, enabled: bool) -> Any:
    """A tqdm bar on stderr over ``iterable`` (only on a terminal), or the iterable itself."""
    if not enabled:
        return iterable
    from tqdm import tqdm  # ~50 ms to import: only a bar needs it

    return tqdm(iterable, total=total, desc=desc, unit="topo", file=sys.stderr, leave=False,
                disable=None)


def add_output_options(p: argparse.ArgumentParser) -> None:
    """``--overwrite``, ``--json`` and ``--no-progress`` of a study verb."""
    p.add_argument("--overwrite", action="store_true",
                   help="discard the results in DIR (e.g. a study with other settings) and start "
                        "over")
    p.add_argument("--json", action="store_true",
                   help="print the summary as one JSON object (as 'tpcstudy show DIR --json'); "
                        "the run's counts go to standard error")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def print_study_json(out: str, k: Optional[int] = None, aggregate: str = "topology") -> None:
    """The finished study in ``out`` as ``tpcstudy show --json`` prints it."""
    # imported here: the summaries of every kind load every study's module
    from ..study.store import load_results
    from ..study.summary import summary_data

    print(json.dumps(summary_data(load_results(out), k=k, aggregate=aggregate)))


def out_slug(topo: Any) -> str:
    """A folder-name part for the topologies ``--topo`` names: ``zoo-Abilene`` (one spec),
    ``Abilene+Sprint`` (a few: their last names), ``7-topologies``."""
    specs = topo_specs(topo)

    def clean(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-.") or "topo"

    if len(specs) == 1:
        one = specs[0].rstrip("/")
        return clean(os.path.basename(one) if os.path.exists(one) else one)
    text = "+".join(clean(os.path.basename(s.rstrip("/"))) for s in specs)
    return text if len(text) <= 60 else f"{len(specs)}-topologies"


def add_out_option(p: argparse.ArgumentParser, verb: str) -> None:
    """``--out DIR`` of a study verb, optional: default ``results/VERB-TOPOLOGY``."""
    p.add_argument("--out", metavar="DIR", default=None,
                   help=f"results folder (meta.json, results.csv); re-running resumes (default "
                        f"results/{verb}-TOPOLOGY, e.g. results/{verb}-zoo-Abilene, printed)")


def resolve_out(args: argparse.Namespace, verb: str, base: str = "results") -> str:
    """``args.out``, or its default folder ``BASE/VERB-TOPOLOGY`` named after the verb and the
    topologies (said on standard error)."""
    if not args.out:
        args.out = os.path.join(base, f"{verb}-{out_slug(args.topo)}")
        print(f"tpcstudy: --out not given: results go to {args.out}", file=sys.stderr)
    return str(args.out)


def finish_study(args: argparse.Namespace, run: Any, rows: List[Dict[str, Any]], t0: float,
                 skipped: str, where: Callable[[Dict[str, Any]], str],
                 unit: str = "topologies") -> int:
    """The lines after a study's summary (counts, time, next steps, failed rows); its exit
    (``unit``: what the run's tasks are)."""
    failed = [r for r in rows if r.get("status") == "failed"]
    if run.report():
        print(run.report(), file=sys.stderr)
    info = sys.stderr if args.json else sys.stdout
    print(f"{run.total} {unit} ({run.skipped} reused from an earlier run), {len(rows)} rows, "
          f"{skipped}{len(failed)} failed rows; {time.perf_counter() - t0:.1f} s; results in "
          f"{run.results}", file=info)
    if len(failed) < len(rows):  # something to plot and show
        print(next_steps(args.out), file=info)
    for r in failed[:10]:
        print(f"  failed: {r['topology']} {where(r)}: {r['error']}", file=sys.stderr)
    return 1 if failed else 0


def next_steps(out: str) -> str:
    """What a user does after a study: its figures, its summary again."""
    q = shlex.quote(str(out))
    return (f"next: tpcstudy plot {q} --out figures   (the figures); "
            f"tpcstudy show {q}   (this summary again)")


def deprecated_alias(parser: argparse.ArgumentParser, old: str, new: str, dest: str) -> None:
    """Accept ``old`` (hidden from ``--help``) as ``new`` for scripts written before the
    rename, with a warning on standard error."""
    class _Alias(argparse.Action):
        def __call__(self, p: argparse.ArgumentParser, ns: argparse.Namespace, value: Any,
                     option: Optional[str] = None) -> None:
            print(f"tpcstudy: warning: {old} is deprecated, use {new}", file=sys.stderr)
            setattr(ns, dest, value)

    parser.add_argument(old, dest=dest, action=_Alias, help=argparse.SUPPRESS)


def add_controller_options(p: Any) -> None:
    """``--controller-at`` and ``--igp-delay``: when the controller pushes relative to the IGP
    (:mod:`tpcstudy.control.run`), for ``tpcstudy control`` and ``tpcstudy emulate failures``
    alike (one declaration, one meaning)."""
    from ..control.run import AT

    p.add_argument("--controller-at", default="both", choices=AT,
                   help="when the controller pushes, relative to the IGP re-converging after a "
                        "link event: at once without the paths whose segments still route over "
                        "the down link, then with them once the IGP has re-converged (both, "
                        "default); only once the IGP has re-converged (igp); or at once with "
                        "every path (event: a connection a swap moves onto such a path is in a "
                        "black hole until the IGP re-converges)")
    p.add_argument("--igp-delay", type=float, default=0.2, metavar="SECONDS",
                   help="the IGP re-converges this long after a link event (0 to 60, default "
                        "0.2): on an emulated network every router then gets the routes of the "
                        "graph without the links down; with events from lines, the time the "
                        "controller takes the real network's IGP to need (--controller-at)")
