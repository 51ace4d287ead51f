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

:data:`KINDS` maps each results kind to its module (what ``tpcstudy plot`` summarises).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Sequence

__all__ = ["KINDS", "experiment_module", "summary_line"]

#: Results kind -> the module that writes it and its one-line summary function.
KINDS = {"emulate-throughput": ("throughput", "summary_line"),
         "emulate-failover": ("failover", "summary_line"),
         "emulate-mptcp": ("semper", "summary_line"),
         "emulate-fault": ("semper", "fault_summary_line"),
         "emulate-policies": ("policies", "summary_line"),
         "emulate-verify": ("verify", "summary_line")}


def experiment_module(kind: str) -> ModuleType:
    """The experiment module of results kind ``kind``."""
    return importlib.import_module(f".{KINDS[kind][0]}", __name__)


def summary_line(kind: str, rows: Sequence[Any]) -> str:
    """One line of key numbers for a results folder of an emulation kind."""
    return str(getattr(experiment_module(kind), KINDS[kind][1])(rows))
