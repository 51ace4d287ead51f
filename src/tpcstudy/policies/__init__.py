"""Host path-selection policies: which path of a destination's table a connection takes.

A host (a source edge router, or the hosts behind it) holds, per destination, the list of paths of
its path table (slot 0 the default path, then the backups; docs/srh-map.md). A policy decides the
path of every new connection and may move live connections. Every policy has the same interface
(:class:`Policy`), is driven by explicit timestamps (never the wall clock) and draws its random
numbers from a generator seeded by the caller, so the same observations give the same decisions.

========================  ==========================================================================
name                      rule (source; docs/policies.md has every parameter and its default)
========================  ==========================================================================
``ecmp``                  no SRH: the network's ECMP hashing chooses (baseline)
``random``                uniform over the table's paths (the TPC paper's baseline)
``lp``                    static shares from the max-flow LP's solution, by smooth weighted round
                          robin (the optimum's placement)
``exp3[:GAMMA[:HOOK]]``   EXP3 over the paths, reward from the connection's smoothed RTT
                          ("Leveraging eBPF to Make TCP Path-Aware", IEEE TNSM 2022, §IV, Algorithm 1
                          and Listings 4-6); HOOK (e.g. 16k): decide again every HOOK bytes acked
``ba-rtt``                load-weighted flow mapping, weights from two-stage smoothed per-path RTT
``ba-throughput``         the same from per-path throughput ("Bandwidth Aggregation over
                          Multihoming Links", Sterca, Bufnea, Niculescu; Algorithms 1-4)
``queue-max``             least congested path, congestion = MAX of the per-hop queueing delays
``queue-sum``             the same with their SUM ("Switches Know the Exact Amount of Congestion",
                          Arslan, McKeown)
========================  ==========================================================================

The driver (the emulator) calls, for each host:

- :meth:`Policy.choose` when a connection opens: the path index, or ``None`` for no SRH;
- :meth:`Policy.progress` while it runs (smoothed RTT, bytes acknowledged so far): a policy may
  answer with a new path for that connection (EXP3's hook activation rate);
- :meth:`Policy.queues` with the per-hop queueing delays of a path, as switches would stamp them;
- :meth:`Policy.moves` periodically: live connections to move (the BA policies' flow remapping);
- :meth:`Policy.closed` when the connection ends (EXP3 rewards its path then).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence, Tuple

from ..errors import UsageError

if TYPE_CHECKING:
    from .ba import BaPolicy, Cycle, flow_remapping, window_average
    from .base import Policy
    from .baselines import EcmpPolicy, LpPolicy, RandomPolicy
    from .exp3 import Exp3Policy
    from .queues import QueuePolicy

__all__ = ["POLICIES", "Policy", "EcmpPolicy", "RandomPolicy", "LpPolicy", "Exp3Policy",
           "BaPolicy", "QueuePolicy", "make_policy", "parse_policy", "window_average",
           "Cycle", "flow_remapping"]

#: Public name -> its module, imported on first use: the emulator's traffic agent imports only
#: the policy it runs.
_LAZY = {"BaPolicy": "ba", "Cycle": "ba", "flow_remapping": "ba", "window_average": "ba",
         "Policy": "base", "EcmpPolicy": "baselines", "LpPolicy": "baselines",
         "RandomPolicy": "baselines", "Exp3Policy": "exp3", "QueuePolicy": "queues"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


#: Every policy name ``make_policy`` accepts (``exp3`` also as ``exp3:GAMMA``).
POLICIES = ("ecmp", "random", "lp", "exp3", "ba-rtt", "ba-throughput", "queue-max", "queue-sum")


def parse_policy(spec: str) -> Tuple[str, Dict[str, float]]:
    """``"exp3:0.2"`` -> ``("exp3", {"gamma": 0.2})``; ``"exp3:0.1:16k"`` also sets EXP3's hook
    activation rate (``hook_bytes`` = 16000: reward the path and draw again every 16 kB
    acknowledged, Listing 4; a plain number is bytes); other names take no parameter."""
    name, _, arg = str(spec).strip().partition(":")
    if name not in POLICIES:
        raise UsageError(f"unknown policy {spec!r}; choose from {', '.join(POLICIES)} "
                         f"(exp3 as exp3:GAMMA or exp3:GAMMA:HOOK)")
    if not arg:
        return name, {}
    if name != "exp3":
        raise UsageError(f"policy {spec!r}: only exp3 takes a parameter (exp3:GAMMA)")
    g, _, hook = arg.partition(":")
    try:
        gamma = float(g)
    except ValueError:
        raise UsageError(f"policy {spec!r}: GAMMA must be a number in [0, 1]") from None
    if not 0.0 <= gamma <= 1.0:
        raise UsageError(f"policy {spec!r}: GAMMA must be in [0, 1]")
    out: Dict[str, float] = {"gamma": gamma}
    if hook:
        scale = 1000 if hook[-1:].lower() == "k" else 1
        try:
            n = int(hook[:-1] if scale > 1 else hook) * scale
        except ValueError:
            n = 0
        if not 1 <= n <= 1 << 30:
            raise UsageError(f"policy {spec!r}: HOOK is the bytes acknowledged between two "
                             f"decisions, 1 to 2^30 (e.g. 16k)")
        out["hook_bytes"] = n
    return name, out


def make_policy(spec: str, paths: Mapping[str, int], *, seed: int = 0,
                shares: Optional[Mapping[str, Sequence[float]]] = None, **params: object) -> Policy:
    """A policy by name (:data:`POLICIES`; ``exp3:GAMMA``), for the destinations in ``paths``.

    ``shares`` (destination -> one share per path) is required by ``lp``; ``params`` go to the
    policy's constructor (e.g. ``reward="relative"`` for exp3).
    """
    name, parsed = parse_policy(spec)
    kw: Dict[str, object] = {**parsed, **params}
    if name == "ecmp":
        from .baselines import EcmpPolicy
        return EcmpPolicy(paths, seed=seed)
    if name == "random":
        from .baselines import RandomPolicy
        return RandomPolicy(paths, seed=seed)
    if name == "lp":
        from .baselines import LpPolicy
        if shares is None:
            raise UsageError("policy lp needs the LP's shares per destination")
        return LpPolicy(paths, shares=shares, seed=seed)
    if name == "exp3":
        from .exp3 import Exp3Policy
        return Exp3Policy(paths, seed=seed, **kw)  # type: ignore[arg-type]
    if name.startswith("ba-"):
        from .ba import BaPolicy
        return BaPolicy(paths, metric=name[3:], seed=seed, **kw)  # type: ignore[arg-type]
    from .queues import QueuePolicy
    return QueuePolicy(paths, aggregate=name[6:], seed=seed)
