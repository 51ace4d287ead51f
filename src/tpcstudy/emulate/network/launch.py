"""Run any program as a process of an emulated host: inside its router's network namespace and
its cgroup v2 (where a BPF host agent sees its sockets).

``python -m tpcstudy.emulate.network.launch NETNS CGROUP -- PROGRAM ARG...`` enters the
namespace (``setns``), joins the cgroup (``CGROUP`` may be ``-`` for none) and replaces itself
with the program (``execvp``: the same pid, its standard streams and exit status passed
through); no shell reads any argument. :func:`launch_argv` builds that command line.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional, Sequence

from ...linux import die_with_parent, join_cgroup, join_netns

__all__ = ["launch_argv", "main"]


def launch_argv(netns: str, cgroup: Optional[str], argv: Sequence[str]) -> List[str]:
    """The command that runs ``argv`` as a process of the emulated host (module docstring)."""
    if not argv:
        raise ValueError("nothing to run")
    return [sys.executable, "-I", "-m", __name__, netns, cgroup or "-", "--", *argv]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parent = os.getppid()
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[2] != "--":
        print("usage: python -m tpcstudy.emulate.network.launch NETNS CGROUP|- -- PROGRAM "
              "[ARG...]", file=sys.stderr)
        return 2
    netns, cgroup, program = args[0], args[1], args[3:]
    die_with_parent(parent)  # the program (after exec) dies with the emulator too
    try:
        join_netns(netns)
        if cgroup != "-":
            join_cgroup(cgroup)
    except (OSError, ValueError) as exc:
        print(f"tpcstudy: cannot enter {netns!r}/{cgroup!r}: {exc}", file=sys.stderr)
        return 126
    try:
        os.execvp(program[0], program)
    except OSError as exc:
        print(f"tpcstudy: cannot run {program[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # pragma: no cover (execvp does not return)


if __name__ == "__main__":
    raise SystemExit(main())
