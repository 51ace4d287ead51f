"""The emulator's third layer: the experiments (they import the agent's client and the network,
never the other way round).

Each module owns one experiment: its settings, how it measures one task on a built network, its
results kind, columns and key, its summary and the table the command prints; all run through
one harness (:mod:`~.harness`: results folders, resume, one network per unit, always torn down).

- :mod:`~.throughput` (+ :mod:`~.placement`): real TCP on each model's LP solution against the
  LP;
- :mod:`~.verify`: does an exported path table route, do its maps load;
- :mod:`~.failover`: NRTOChanger, TimeoutChanger and plain TCP when a link of the path fails;
- :mod:`~.semper`: SEMPER's dumbbell and fault test with the kernel's MPTCP;
- :mod:`~.policies`: host path-selection policies on Poisson transfers between heavy pairs;
- :mod:`~.twopaths`: the policies in the multihoming and changing-delay scenarios.

Their results kinds (``emulate-*``) are listed, with their columns, summary and figure, in the
one registry of kinds, :data:`tpcstudy.study.kinds.KINDS`.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...study.kinds import KINDS as _ALL_KINDS
from ...study.kinds import kind as _kind

__all__ = ["KINDS", "summary_line"]

#: The emulator's results kinds (names), from the registry.
KINDS = tuple(k for k, v in _ALL_KINDS.items() if v.emulated)


def summary_line(kind: str, rows: Sequence[Any]) -> str:
    """One line of key numbers for a results folder of an emulation kind."""
    return str(_kind(kind).summary_function()(rows))
