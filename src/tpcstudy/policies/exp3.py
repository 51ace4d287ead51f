"""EXP3 over a destination's paths, as the TPC agent runs it (IEEE TNSM 2022, §IV)."""

from __future__ import annotations

import math
from typing import Dict, Mapping, Optional

import numpy as np

from ..errors import UsageError
from .base import Policy

__all__ = ["Exp3Policy"]


class Exp3Policy(Policy):
    """The TPC agent's EXP3 lowest-delay path manager (IEEE TNSM 2022, §IV).

    Per destination, a weight per path (all 1 at first). A new connection draws path ``a`` with
    probability ``p_a = (1 - gamma) w_a / sum(w) + gamma / n`` (Algorithm 1) and remembers
    ``p_a``. When the connection closes (and, with ``hook_bytes``, each time it has sent that many
    more bytes: Listing 4's hook activation rate, after which it draws a path again), its path is
    rewarded (Listing 5):

    - ``max_srtt`` of the destination = the largest smoothed RTT seen so far for it;
    - observed reward ``u = max_srtt - srtt``; ``reward="agent"`` takes it in the agent's unit
      (the kernel's ``srtt_us``, i.e. microseconds << 3), ``reward="relative"`` as
      ``(max_srtt - srtt) / max_srtt`` in [0, 1], the range EXP3's analysis assumes;
    - ``w_a *= exp(gamma * (u / p_a) / n)``;
    - then the weights are normalised (Listing 6): ``w_i = max(1, w_i * max_weight / sum(w))``.

    With the agent's unit a reward of a few hundred microseconds already moves nearly all the
    weight to the rewarded path (the normalisation then bounds it to ``max_weight : 1``); the
    relative reward learns over many connections. Weights are kept as logarithms, so no reward
    overflows.
    """

    name = "exp3"
    signals = frozenset({"rtt"})
    REWARDS = ("agent", "relative")

    def __init__(self, paths: Mapping[str, int], *, gamma: float = 0.1, reward: str = "agent",
                 max_weight: float = 10000.0, hook_bytes: Optional[int] = None,
                 seed: int = 0) -> None:
        super().__init__(paths, seed=seed)
        if not 0.0 <= float(gamma) <= 1.0:
            raise UsageError(f"policy exp3: gamma = {gamma!r} must be in [0, 1]")
        if reward not in self.REWARDS:
            raise UsageError(f"policy exp3: reward = {reward!r}; choose from {', '.join(self.REWARDS)}")
        if not max_weight >= 1.0:
            raise UsageError(f"policy exp3: max_weight = {max_weight!r} must be >= 1")
        if hook_bytes is not None and int(hook_bytes) <= 0:
            raise UsageError(f"policy exp3: hook_bytes = {hook_bytes!r} must be > 0")
        self.gamma, self.reward, self.max_weight = float(gamma), reward, float(max_weight)
        self.hook_bytes = None if hook_bytes is None else int(hook_bytes)
        self.log_w = {d: np.zeros(n) for d, n in self.paths.items()}
        self.max_srtt: Dict[str, float] = {}
        self._prob: Dict[int, float] = {}
        self._last_bytes: Dict[int, int] = {}

    def weights(self, dest: str) -> np.ndarray:
        """The destination's current weights (after normalisation: in [1, max_weight])."""
        return np.exp(self.log_w[dest])

    def probabilities(self, dest: str) -> np.ndarray:
        """``p_a`` of Algorithm 1 for every path of ``dest``."""
        lw = self.log_w[dest]
        w = np.exp(lw - lw.max())
        n = len(w)
        return (1.0 - self.gamma) * w / w.sum() + self.gamma / n

    def _pick(self, dest: str, now: float) -> Optional[int]:
        p = self.probabilities(dest)
        return int(self.rng.choice(len(p), p=p / p.sum()))

    def choose(self, conn: int, dest: str, now: float) -> Optional[int]:
        path = super().choose(conn, dest, now)
        assert path is not None
        self._prob[conn] = float(self.probabilities(dest)[path])
        self._last_bytes[conn] = 0
        return path

    def _reward(self, conn: int, srtt_us: Optional[float]) -> None:
        dest, path = self.live[conn]
        if srtt_us is None or not math.isfinite(srtt_us) or srtt_us <= 0 or path is None:
            return
        top = max(self.max_srtt.get(dest, 0.0), float(srtt_us))
        self.max_srtt[dest] = top
        if self.reward == "agent":
            u = 8.0 * (top - float(srtt_us))  # the kernel's srtt_us field is usec << 3
        else:
            u = (top - float(srtt_us)) / top
        n = self.paths[dest]
        lw = self.log_w[dest]
        lw[path] += self.gamma * (u / self._prob[conn]) / n
        # Listing 6: w_i = max(1, w_i * max_weight / sum(w)), in the log domain
        top_lw = lw.max()
        log_sum = top_lw + math.log(float(np.exp(lw - top_lw).sum()))
        lw[:] = np.maximum(0.0, lw - log_sum + math.log(self.max_weight))

    def progress(self, conn: int, now: float, *, srtt_us: Optional[float] = None,
                 acked_bytes: Optional[int] = None) -> Optional[int]:
        if self.hook_bytes is None or acked_bytes is None or conn not in self.live:
            return None
        if acked_bytes - self._last_bytes[conn] < self.hook_bytes:
            return None
        self._last_bytes[conn] = int(acked_bytes)
        self._reward(conn, srtt_us)
        dest, old = self.live[conn]
        new = self._pick(dest, now)
        assert new is not None
        self.live[conn] = (dest, new)
        self._prob[conn] = float(self.probabilities(dest)[new])
        return new if new != old else None

    def closed(self, conn: int, now: float, *, srtt_us: Optional[float] = None) -> None:
        if conn in self.live:
            self._reward(conn, srtt_us)
        self._prob.pop(conn, None)
        self._last_bytes.pop(conn, None)
        super().closed(conn, now)

    def describe(self) -> Dict[str, object]:
        return {"name": self.name, "seed": self.seed, "gamma": self.gamma, "reward": self.reward,
                "max_weight": self.max_weight, "hook_bytes": self.hook_bytes}
