"""``tpcstudy emulate ACTION``: the study's paths on a real Linux SRv6 network
(:mod:`tpcstudy.emulate`).

Each action has its own parser (only its options in its ``--help``, its defaults there) in one
module of this package; ``tpcstudy emulate`` with no action (or options first) runs
``throughput``.
"""

from __future__ import annotations

import importlib
from typing import Any, List, Sequence

from ..options import RawHelp

__all__ = ["register", "ACTIONS", "DEFAULT_ACTION", "with_default_action"]

#: Action -> the module of this package that registers it (help order).
ACTIONS = {"throughput": "throughput", "verify": "verify", "failover": "failover",
           "dumbbell": "semper", "fault": "semper", "policies": "policies", "failures": "failures",
           "up": "live",
           "exec": "live", "watch": "live", "inspect": "live", "pingall": "live", "list": "live",
           "down": "live", "clean": "admin",
           "check": "admin"}
DEFAULT_ACTION = "throughput"

DESCRIPTION = """\
The study's paths on a real Linux SRv6 data plane: one network namespace per router, one veth
pair per link, the export's addressing plan, IPv6 multipath routes from tpcstudy's own
shortest-path DAGs, per-direction HTB shaping with byte-limited queues, SRv6 everywhere.
'tpcstudy emulate ACTION --help' lists each action's options; with no action, throughput.

Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN), iproute2, and for verify bpftool."""


def register(sub: Any) -> None:
    """Add ``tpcstudy emulate`` and its actions."""
    p = sub.add_parser("emulate", help="the study's paths on a real Linux SRv6 network "
                                       "(throughput vs the LP, table verification, failover, "
                                       "MPTCP, host policies)",
                       description=DESCRIPTION,
                       formatter_class=RawHelp)
    acts = p.add_subparsers(dest="action", metavar="ACTION")
    acts.required = True
    for module in dict.fromkeys(ACTIONS.values()):
        importlib.import_module(f".{module}", __name__).register(acts)


def with_default_action(argv: Sequence[str]) -> List[str]:
    """``argv`` with ``throughput`` inserted after ``emulate`` when no action follows it (but
    not before ``-h``/``--help``, which list the actions)."""
    out = list(argv)
    if "emulate" in out:
        i = out.index("emulate")
        rest = out[i + 1:]
        if rest and rest[0] not in ACTIONS and rest[0] not in ("-h", "--help"):
            out.insert(i + 1, DEFAULT_ACTION)
    return out
