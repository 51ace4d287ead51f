"""What the connections' reads say about a cut (``tpcstudy emulate failures``): each
connection's stall across it, whether the cut hit it and how long it took to read again, how
many retransmission timeouts that stall holds, and the goodput over time. Pure functions of
the timelines the traffic agent records (each read's time, and the bytes so far); the
experiment is :mod:`.failures`."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .failover import first_silence, recovery_time

__all__ = ["BIN", "stall", "hit_by_cut", "timeouts", "goodput_series"]

#: The goodput series' bin, seconds.
BIN = 0.1


def stall(timeline: Sequence[Sequence[float]], t_cut: float, gap: float
          ) -> Optional[Tuple[float, float]]:
    """The stall :func:`~.failover.recovery_time` counts: ``(last read before it, first read
    after it)`` relative to ``t_cut``, for the first silence of at least ``gap`` seconds that
    ends after the cut, or ``(last read, inf)`` when the reads stop (a lost connection); None
    without a read."""
    prev, back, _ = first_silence(timeline, t_cut, gap)
    if back is not None:
        assert prev is not None  # (a silence ends after a read)
        return prev - t_cut, back - t_cut
    return (prev - t_cut, math.inf) if prev is not None else None


def hit_by_cut(timeline: Sequence[Sequence[float]], t_cut: float, end: float, gap: float,
               within: float) -> Tuple[str, float, Optional[Tuple[float, float]]]:
    """``(state, recovery, stall)``: :func:`~.failover.recovery_time`'s state and seconds, and
    :func:`stall`; the state is ``"later"`` instead of ``"ok"`` when the stall began more than
    ``within`` seconds after the cut (congestion on a connection that read through the cut:
    the data past the cut drains from the queues downstream of it sooner), ``"earlier"`` when
    it began at least ``gap`` before the cut and the connection read on after it (it was
    already stalled when the link went down: a congestion back-off whose end says nothing of
    the cut; on Geant2012 a connection whose paths avoid the cut, silent 1.9-3.0 s before it
    after 4 timeouts, counted recoveries of 0.41-1.57 s until 2026-11-27). Such a connection
    is hit all the same when, after that stall, it stalls again beginning at most ``within``
    after the cut (that stall and its end are returned) or never reads again (lost: on
    six-paths a connection whose ACKs cross the cut may read one retransmission, then no
    more); a connection that never reads again is lost whenever its stall began."""
    state, v = recovery_time(timeline, t_cut, end, gap)
    st = stall(timeline, t_cut, gap)
    if state == "ok" and st is not None and st[0] > within:
        return "later", v, st
    if state == "ok" and st is not None and st[0] <= -gap:
        # already stalled at the cut: what the cut did shows after that stall ends (a
        # connection whose path it crossed stalls again, or never reads again: lost)
        back = t_cut + st[1]
        state2, v2 = recovery_time(timeline, back, end, gap)
        st2 = stall(timeline, back, gap)
        if state2 == "not recovered":
            return state2, v2, (st[0], math.inf)
        if state2 == "ok" and st2 is not None and st2[0] + st[1] <= within:
            return "ok", v2 + st[1], (st2[0] + st[1], st2[1] + st[1])
        return "earlier", v, st
    return state, v, st


def timeouts(stall_s: float, rto_s: float) -> int:
    """How many retransmission timeouts, each twice the last from ``rto_s`` (RFC 6298 back-off),
    fit in a stall of ``stall_s`` seconds before its retransmission got through: the k with
    ``rto (2^k - 1)`` closest to the stall (the last one's retransmission and its ACK take
    an RTT more: a stall is an estimate, not a count)."""
    if not (rto_s > 0 and math.isfinite(stall_s)):
        return -1
    return max(1, int(round(math.log2(stall_s / rto_s + 1.0))))


def goodput_series(timelines: Sequence[Sequence[Tuple[float, int]]], t0: float, end: float,
                   bin_s: float = BIN) -> List[float]:
    """Bits per second received in each ``bin_s`` bin from ``t0`` to ``end`` (a timeline holds
    each read's time and the connection's bytes so far)."""
    n = max(1, int(math.ceil((end - t0) / bin_s - 1e-9)))
    out = np.zeros(n)
    for tl in timelines:
        prev = 0
        for t, total in tl:
            i = int((float(t) - t0) // bin_s)
            if 0 <= i < n:
                out[i] += int(total) - prev
            prev = int(total)
    return (out * 8 / bin_s).tolist()
