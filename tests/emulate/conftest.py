"""Fixtures of the emulator's tests.

- Every namespace these tests create starts with a tag of this session (``TPCSTUDY_NETNS_TAG``),
  so the session-end check below sees exactly ours: it removes any that survived (a test that
  failed half-way) and then FAILS the session, so a leak is never silent.
- :func:`emulator`: the tests that need root, kernel features and tools skip with the reason
  when they are missing, or fail instead when ``TPCSTUDY_EMULATE_REQUIRED=1`` (CI).
- Run records go to a private folder (``TPCSTUDY_RUN_DIR``), so ``clean`` in a test only ever
  sees this session's runs.
- ``--link-mbps auto`` plans with a calibration written here for this machine
  (``TPCSTUDY_CALIBRATION``: 50,000 packets/s per CPU, 2 % idle load), so no test measures one
  unasked (tests/emulate/test_emulate_budget.py measures a real one, briefly).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from typing import Dict, Iterator

import pytest

TAG = "tt" + secrets.token_hex(2)
os.environ["TPCSTUDY_NETNS_TAG"] = TAG
os.environ["TPCSTUDY_RUN_DIR"] = tempfile.mkdtemp(prefix="tpcstudy-runs-")
REQUIRED = os.environ.get("TPCSTUDY_EMULATE_REQUIRED") == "1"
os.environ["TPCSTUDY_CALIBRATION"] = os.path.join(os.environ["TPCSTUDY_RUN_DIR"],
                                                  "calibration.json")
# plans made as on an idle machine, whatever else runs beside the tests (their readings of the
# machine stay real); tests/emulate/test_budget.py checks the measured background by hand
os.environ["TPCSTUDY_EMULATE_BACKGROUND"] = "0"


def _write_calibration() -> None:
    from tpcstudy.emulate.experiments.budget import Calibration, machine, save_calibration

    m = machine()
    save_calibration(Calibration(seconds_per_packet=2e-5, base_busy=0.02, cpus=m["cpus"],
                                 mtu=1500, machine=m, measured="the tests' own"))


_write_calibration()


def _ours() -> list:
    from tpcstudy.emulate.network.kernel import list_namespaces

    return list_namespaces(TAG)


@pytest.fixture(scope="session", autouse=True)
def no_namespace_left() -> Iterator[None]:
    """Session-end check: no namespace with this session's tag survives (and the session's
    run-record folder goes)."""
    yield
    shutil.rmtree(os.environ["TPCSTUDY_RUN_DIR"], ignore_errors=True)
    left = _ours()
    if left:
        subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"netns del {n}\n"
                                                                       for n in left),
                       text=True, capture_output=True)
        pytest.fail(f"{len(left)} network namespaces of this test session survived: "
                    f"{', '.join(left[:5])}{' ...' if len(left) > 5 else ''} (removed now)")


@pytest.fixture(scope="session")
def emulator() -> Dict[str, str]:
    """The emulator can run here (root, kernel features, iproute2, bpftool), else skip/fail."""
    from tpcstudy.emulate.network.checks import OK, check_system

    res = check_system(bpftool=True)
    missing = [f"{k}: {v}" for k, v in res.items() if v != OK and "not required" not in k]
    if missing:
        msg = "the emulator cannot run here: " + "; ".join(missing)
        if REQUIRED:
            pytest.fail(msg + " (TPCSTUDY_EMULATE_REQUIRED=1)")
        pytest.skip(msg)
    return res


@pytest.fixture
def emulation_guard() -> Iterator[None]:
    """Per test: whatever the test does, none of its namespaces outlives it."""
    before = set(_ours())
    yield
    left = [n for n in _ours() if n not in before]
    if left:
        subprocess.run(["ip", "-force", "-batch", "-"],
                       input="".join(f"netns del {n}\n" for n in left), text=True,
                       capture_output=True)
        pytest.fail(f"the test left {len(left)} namespaces: {left[:3]}")
