"""``bpftool`` in a private bpffs: BPF maps pinned where the export's files say, without touching
the host's ``/sys/fs/bpf``.

:func:`run_private` starts ``unshare --mount --propagation private -- python -m`` this module,
which mounts a fresh bpffs on ``/sys/fs/bpf`` inside its own mount namespace and runs the steps
it is given (``mkdir PATH`` or a ``bpftool`` argv), each as an argument vector: no shell ever
sees a path. Whatever is pinned vanishes with the namespace when the helper exits, however it
exits. :func:`check_pin` is the only pin path form accepted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any, List, Sequence

from ...errors import EmulationError, UsageError

__all__ = ["run_private", "check_pin", "BPFFS", "main"]

BPFFS = "/sys/fs/bpf"
_PIN_RE = re.compile(r"^/sys/fs/bpf/[A-Za-z0-9_./-]+$")


def check_pin(pin: str, where: str = "") -> str:
    """``pin`` if it is a plain path under ``/sys/fs/bpf/`` (letters, digits, ``_ . / -``, no
    ``..`` component), else :class:`UsageError` naming ``where``."""
    if (not isinstance(pin, str) or not _PIN_RE.match(pin) or len(pin) > 255
            or ".." in pin.split("/")):
        raise UsageError(f"{where + ': ' if where else ''}pin path {str(pin)[:80]!r} is not a "
                         f"plain path under {BPFFS}/ (letters, digits, '_', '.', '/', '-')")
    return pin


def run_private(steps: Sequence[Sequence[str]], *, timeout: float = 300.0) -> List[str]:
    """Run ``steps`` in a private bpffs (module docstring); returns each step's output.

    Raises
    ------
    EmulationError
        A step failed (the message quotes the tool's error).
    """
    for st in steps:
        if not st or st[0] not in ("mkdir", "bpftool"):
            raise ValueError(f"run_private: step {list(st)[:3]} is neither mkdir nor bpftool")
    argv = ["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-I", "-m",
            __name__]
    try:
        p = subprocess.run(argv, input=json.dumps([list(s) for s in steps]),
                           capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise EmulationError("unshare not found: install util-linux") from None
    if p.returncode != 0:
        raise EmulationError(f"bpftool: {(p.stderr or p.stdout).strip()[-300:]}")
    out = json.loads(p.stdout)
    return [str(x) for x in out]


def main() -> int:
    """The helper's side (inside the private mount namespace)."""
    steps: List[List[str]] = json.loads(sys.stdin.read())
    subprocess.run(["mount", "-t", "bpf", "bpf", BPFFS], check=True, capture_output=True)
    outs: List[Any] = []
    for st in steps:
        if st[0] == "mkdir":
            os.makedirs(check_pin(st[1]), exist_ok=True)
            outs.append("")
            continue
        r = subprocess.run(st, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print(f"{' '.join(st[:4])} ...: {(r.stderr or r.stdout).strip()[-300:]}",
                  file=sys.stderr)
            return 1
        outs.append(r.stdout)
    print(json.dumps(outs))
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except (OSError, ValueError, subprocess.CalledProcessError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
