"""The ``tpcstudy`` command line: parse, validate, call the library, print.

Nothing in the library imports this package. Each verb is one module of it with
``register(subparsers)``; :data:`VERBS` lists them in help order (a new verb is one more name
there). Exit status: 0 on success, 2 for a usage error (bad option or value), 1 for a failure
at run time (a file that cannot be read or written, data that cannot be fetched, a solver that
fails, a study with failed rows), 130 after Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from .._version import __version__
from ..errors import TpcStudyError

__all__ = ["main", "build_parser", "VERBS"]

#: The verb modules of this package, in help order.
VERBS = ("topo", "data", "zoo", "maxflow", "disjoint", "export", "plot", "emulate")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every verb."""
    parser = argparse.ArgumentParser(
        prog="tpcstudy",
        description="How much capacity does host-chosen Segment Routing unlock on real "
                    "topologies, and which paths should hosts be given?")
    parser.add_argument("--version", action="version", version=f"tpcstudy {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for verb in VERBS:
        importlib.import_module(f"{__name__}.{verb}").register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TpcStudyError as exc:
        print(f"tpcstudy: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`)
        return 0
    except OSError as exc:  # a file or folder that cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tpcstudy: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tpcstudy: interrupted", file=sys.stderr)
        return 130
