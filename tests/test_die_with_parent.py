"""``tpcstudy.linux.die_with_parent`` (the one home of ``PR_SET_PDEATHSIG``: the study's
workers, the traffic agent, every program an emulated host runs through ``network/launch``):
SIGKILL the parent and the child is gone (polled with a deadline), also after it ``exec``-ed
another program; no root needed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

# the middle process: starts the child, prints its pid, then waits to be killed
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]])
print(child.pid, flush=True)
time.sleep(60)
"""
# the child asks, then exec-s a sleeping program (the request survives execve)
CHILD = """
import os, sys
from tpcstudy.linux import die_with_parent
die_with_parent(os.getppid())
print("asked", flush=True)
os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)"])
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie not yet reaped by init counts as dead
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_child_dies_with_its_parent():
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD], stdout=subprocess.PIPE,
                              text=True)
    child = int(parent.stdout.readline())
    try:
        assert parent.stdout.readline().strip() == "asked"
        assert _alive(child)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        parent.stdout.close()
