"""The ``tpcstudy`` command line: parse, validate, call the library, print.

Nothing in the library imports this package. Each verb is one module of it with
``register(subparsers)``; :data:`VERBS` lists them in help order (a new verb is one more name
there). Exit status: 0 on success, 2 for a usage error (bad option or value), 1 for a failure
at run time (a file that cannot be read or written, data that cannot be fetched, a solver that
fails, a study with failed rows), 130 after Ctrl-C, 143 after SIGTERM (which stops a run
exactly like Ctrl-C: workers stopped, finished results kept, temporary files removed).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from typing import Any, Optional, Sequence

from .._version import version_line
from ..errors import Terminated, TpcStudyError, UsageError
from .options import Parser

__all__ = ["main", "build_parser", "VERBS"]

#: The verb modules of this package, in help order.
VERBS = ("topo", "data", "zoo", "maxflow", "mlu", "disjoint", "reproduce", "export", "plot", "show",
         "emulate", "agent", "control", "completion")


def build_parser(verbs: Sequence[str] = VERBS) -> argparse.ArgumentParser:
    """The parser of every verb (of ``verbs`` only: :func:`main` imports the one verb a
    command names, not the dozen modules of all of them, ~0.1-0.3 s of its start-up)."""
    parser = Parser(
        prog="tpcstudy",
        description="How much capacity does host-chosen Segment Routing unlock on real "
                    "topologies, and which paths should hosts be given?")
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for verb in verbs:
        importlib.import_module(f"{__name__}.{verb}").register(sub)
    return parser


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


#: Options naming an output file or folder: an empty value would mean the current directory.
_OUTPUTS = ("out", "paths_out", "out_dir")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    raw = list(sys.argv[1:] if argv is None else argv)
    # a command naming its verb first needs only that verb's parser; anything else (no verb,
    # --help, --version, a misspelt verb) gets all of them, for the full usage and choices
    parser = build_parser((raw[0],) if raw[:1] and raw[0] in VERBS else VERBS)
    if raw[:1] == ["emulate"]:  # its default action (tpcstudy emulate --topo ... = throughput)
        from .emulate import with_default_action
        raw = with_default_action(raw)
    args = parser.parse_args(raw)
    old = None
    if threading.current_thread() is threading.main_thread():
        old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        for name in _OUTPUTS:
            if getattr(args, name, None) == "":
                raise UsageError(f"--{name.replace('_', '-')} '': name a file or folder")
        return int(args.func(args) or 0)
    except Terminated:
        print("tpcstudy: terminated (SIGTERM)", file=sys.stderr)
        return 143
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
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
