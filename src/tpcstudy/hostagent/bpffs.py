"""``bpftool`` and ``tc`` steps, on the host's bpffs or in a private one, as argument vectors.

:func:`run_steps` runs steps (``mkdir PATH``, a ``bpftool`` or a ``tc`` argv) one after the
other and returns their outputs; no shell ever sees a path or a value. With ``private=True`` it
starts ``unshare --mount --propagation private -- python -m`` this module, which mounts a fresh
bpffs on ``/sys/fs/bpf`` inside its own mount namespace first: BPF objects pinned there (at the
paths the export's files name) vanish with the namespace when the helper exits, however it
exits, and programs attached meanwhile (to a cgroup, to a ``tc`` hook) stay alive as long as
they are attached. :func:`check_pin` is the only pin path form accepted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import List, Sequence

from ..errors import HostAgentError
from ..export.bpf import bpffs_pin
from ..linux import join_netns, netns_kept

__all__ = ["run_private", "run_steps", "check_pin", "BPFFS", "main", "TOOLS"]

#: What a step may run.
TOOLS = ("bpftool", "tc")

BPFFS = "/sys/fs/bpf"


check_pin = bpffs_pin


#: Steps that are not a tool: ``mkdir PATH`` (under the bpffs), ``netns NAME`` (the steps after
#: it run inside that network namespace: ``tc -n`` would remount ``/sys`` and lose the bpffs
#: pins), ``expect-value-size PIN N`` (stop unless the map pinned at PIN has N-byte values),
#: ``fill PIN HEX`` (write the records HEX, keys and values of the map's sizes back to back, into
#: the map pinned at PIN in one ``bpf(BPF_MAP_UPDATE_BATCH)``: no file, no command line).
ACTIONS = ("mkdir", "netns", "expect-value-size", "fill")


def _die_with_parent() -> None:
    """In a tool's child process: killed when the agent's process dies (a SIGKILL during a
    load leaves no bpftool pinning after it)."""
    import ctypes

    try:
        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass


def fill(pin: str, data: bytes) -> int:
    """Write ``data`` (records of the pinned map's key and value sizes, back to back) into the
    map pinned at ``pin``; the count written."""
    from . import bpfsys

    with bpfsys.obj_get(check_pin(pin)) as fd:
        info = bpfsys.map_info(fd)
        ks, vs = int(info["key_size"]), int(info["value_size"])
        if len(data) % (ks + vs):
            raise HostAgentError(f"map {pin}: {len(data)} bytes are not whole {ks}+{vs}-byte "
                                 f"records")
        recs = [(data[i:i + ks], data[i + ks:i + ks + vs]) for i in range(0, len(data), ks + vs)]
        try:
            return bpfsys.update_batch(fd, recs)
        except OSError as exc:
            raise HostAgentError(f"map {pin}: writing {len(recs)} entries: {exc.strerror}"
                                 ) from None


def _check(steps: Sequence[Sequence[str]]) -> List[List[str]]:
    out = []
    for st in steps:
        st = [str(x) for x in st]
        if not st or st[0] not in (*ACTIONS, *TOOLS):
            raise ValueError(f"step {st[:3]} is none of {', '.join(ACTIONS + TOOLS)}")
        out.append(st)
    return out


def _expect_value_size(pin: str, size: str) -> None:
    r = subprocess.run(["bpftool", "-j", "map", "show", "pinned", check_pin(pin)],
                       capture_output=True, text=True, timeout=60)
    try:
        got = json.loads(r.stdout)["bytes_value"] if r.returncode == 0 else None
    except (ValueError, KeyError, TypeError):
        got = None
    if str(got) != str(size):
        raise HostAgentError(f"map {pin} has {got}-byte values, the table {size}-byte ones: "
                             f"layout mismatch, nothing attached")


def _run(steps: List[List[str]]) -> List[str]:
    """Run the steps here (in this thread's network namespace again afterwards); a failing one
    raises :class:`HostAgentError` quoting its tool."""
    with netns_kept():
        return _run_in(steps)


def _run_in(steps: List[List[str]]) -> List[str]:
    outs: List[str] = []
    for st in steps:
        if st[0] == "mkdir":
            os.makedirs(check_pin(st[1]), exist_ok=True)
            outs.append("")
            continue
        if st[0] == "netns":
            join_netns(st[1])
            outs.append("")
            continue
        if st[0] == "expect-value-size":
            _expect_value_size(st[1], st[2])
            outs.append("")
            continue
        if st[0] == "fill":
            outs.append(str(fill(st[1], bytes.fromhex(st[2]))))
            continue
        try:
            r = subprocess.run(st, capture_output=True, text=True, timeout=300,
                               preexec_fn=_die_with_parent)
        except FileNotFoundError:
            raise HostAgentError(f"{st[0]} not found (Debian: apt-get install "
                                 f"{'bpftool' if st[0] == 'bpftool' else 'iproute2'})") from None
        if r.returncode != 0:
            raise HostAgentError(f"{' '.join(st[:5])} ...: "
                                 f"{(r.stderr or r.stdout).strip()[-400:]}")
        outs.append(r.stdout)
    return outs


def run_steps(steps: Sequence[Sequence[str]], *, private: bool = False,
              timeout: float = 300.0) -> List[str]:
    """Run ``steps`` (module docstring); returns each step's standard output.

    Raises
    ------
    HostAgentError
        A step failed (the message quotes the tool's error).
    """
    checked = _check(steps)
    if not private:
        return _run(checked)
    argv = ["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-I", "-m",
            __name__]
    try:
        p = subprocess.run(argv, input=json.dumps(checked), capture_output=True, text=True,
                           timeout=timeout, preexec_fn=_die_with_parent)
    except FileNotFoundError:
        raise HostAgentError("unshare not found: install util-linux") from None
    if p.returncode != 0:
        raise HostAgentError((p.stderr or p.stdout).strip()[-500:])
    return [str(x) for x in json.loads(p.stdout)]


def run_private(steps: Sequence[Sequence[str]], *, timeout: float = 300.0) -> List[str]:
    """:func:`run_steps` in a private bpffs."""
    return run_steps(steps, private=True, timeout=timeout)


def main() -> int:
    """The helper's side (inside the private mount namespace)."""
    steps = _check(json.loads(sys.stdin.read()))
    subprocess.run(["mount", "-t", "bpf", "bpf", BPFFS], check=True, capture_output=True)
    try:
        outs = _run(steps)
    except HostAgentError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print(json.dumps(outs))
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except (OSError, ValueError, subprocess.CalledProcessError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
