"""The traffic agent without root: TCP_INFO parsing on a buffer laid out by hand, the path
changers' decisions on synthetic readings, every protocol message's round trip and refusals, and
the event loop moving real bytes over loopback in this process's own namespace."""

from __future__ import annotations

import dataclasses
import struct
import threading
import time

import pytest

from tpcstudy.emulate.agent import protocol as P
from tpcstudy.emulate.agent.child import Receiver, Sender, run_loop
from tpcstudy.emulate.agent.tcp import TCP_INFO_LEN, PathChanger, parse_tcp_info
from tpcstudy.emulate.network.kernel import NetnsSwitch


# ----------------------------------------------------------------- TCP_INFO
def test_parse_tcp_info_offsets_by_hand():
    b = bytearray(TCP_INFO_LEN)
    b[0], b[1], b[2], b[4] = 1, 4, 3, 2  # state, ca_state, retransmits, backoff
    u32 = {0: 200_000, 2: 1388, 4: 7, 6: 2, 7: 1, 12: 350, 15: 4321, 18: 10, 23: 9}
    for i, v in u32.items():  # <linux/tcp.h>: the u32 fields from offset 8
        struct.pack_into("<I", b, 8 + 4 * i, v)
    struct.pack_into("<Q", b, 120, 123_456_789_012)  # tcpi_bytes_acked
    struct.pack_into("<Q", b, 128, 42)  # tcpi_bytes_received
    struct.pack_into("<I", b, 152, 77)  # tcpi_data_segs_in
    got = parse_tcp_info(bytes(b))
    assert got == {"state": 1, "ca_state": 4, "retransmits": 3, "backoff": 2, "rto_us": 200_000,
                   "snd_mss": 1388, "unacked": 7, "lost": 2, "retrans": 1,
                   "last_ack_recv_ms": 350, "rtt_us": 4321, "snd_cwnd": 10, "total_retrans": 9,
                   "bytes_acked": 123_456_789_012, "bytes_received": 42, "data_segs_in": 77}
    # an older kernel's shorter struct reads as zeros past its end
    short = parse_tcp_info(bytes(b[:104]))
    assert short["rtt_us"] == 4321 and short["bytes_acked"] == 0


# ----------------------------------------------------------------- the changers
def _info(retransmits: int, acked: int, unacked: int = 5):
    return {"retransmits": retransmits, "bytes_acked": acked, "unacked": unacked}


def test_nrto_moves_when_the_nth_rto_is_due_then_once_per_rto():
    ch = PathChanger("nrto", 3, now=0.0, n=3)
    assert ch.poll(_info(0, 1000), 0.1) is None
    assert ch.poll(_info(1, 1000), 0.3) is None  # one RTO fired: N = 3 needs two
    assert ch.poll(_info(2, 1000), 0.7) == 1  # the third retransmission leaves on slot 1
    assert ch.poll(_info(2, 1000), 0.8) is None  # no second move within the same RTO
    assert ch.poll(_info(3, 1000), 1.5) == 2  # the next RTO without progress: the next slot
    assert ch.poll(_info(4, 1000), 3.1) == 0  # and round again
    assert ch.poll(_info(0, 5000), 3.2) is None  # progress: the count starts over
    assert ch.poll(_info(1, 5000), 3.4) is None
    assert ch.poll(_info(2, 5000), 3.8) == 1


def test_nrto_one_moves_after_the_first_rto():
    ch = PathChanger("nrto", 2, now=0.0, n=1)
    assert ch.poll(_info(0, 10), 0.1) is None
    assert ch.poll(_info(1, 10), 0.3) == 1


def test_timeout_changer_moves_after_t_without_an_ack():
    ch = PathChanger("timeout", 2, now=0.0, ms=100)
    assert ch.poll(_info(0, 100), 0.05) is None  # progress at 0.05
    assert ch.poll(_info(0, 100), 0.149) is None  # 99 ms without an ack
    assert ch.poll(_info(0, 100), 0.151) == 1  # 101 ms: move (before the 200 ms RTO)
    assert ch.poll(_info(0, 100), 0.300) is None  # again only after another RTO fired
    assert ch.poll(_info(1, 100), 0.400) == 0
    assert ch.poll(_info(1, 100, unacked=0), 0.9) is None  # nothing in flight: no move
    idle = PathChanger("timeout", 2, now=0.0, ms=100)
    assert idle.poll(_info(0, 0, unacked=0), 5.0) is None


def test_a_single_path_never_moves():
    ch = PathChanger("nrto", 1, now=0.0, n=1)
    assert ch.poll(_info(5, 0), 9.0) is None
    with pytest.raises(ValueError, match="nrto or timeout"):
        PathChanger("sometimes", 2, now=0.0)


# ----------------------------------------------------------------- the protocol
def _messages():
    t = P.Times(1.0, 2.0, 3.0, 4.5)
    q = P.QueueWatch(100.0, [("ns1", "to2", 1e7)], {"a": {"b": [[("ns1", "to2")]]}})
    return [
        P.ReceiverJob(7, [P.Listen("ns0", "fd00::1", 5201, True)], [3], {3: 1000}),
        P.SenderJob(7, [P.Transfer(3, "ns1", "fd00::2", "fd00::1", 5201, at=0.5, size=1000,
                                   src_router="a", dst_router="b", paths=[b"\x00\x04\xff"],
                                   slot=None, until=2.5, changer=P.Changer("nrto", n=2),
                                   pacing_bps=10**6, mptcp=False)],
                    {"a": {"b": [b"\x01\x02"]}}, {"a": P.PolicySpec("exp3:0.1", {"b": 2}, 3,
                                                                     {"b": [0.5, 0.5]})},
                    q, 50.0, "cubic"),
        P.Ready(), P.Start(t), P.Failed("boom (at child.py:1)"),
        P.ReceiverResult((2.0, None), {3: P.Received(900, 800, 1.1, 1.9, [(1.1, 10), (1.2, 900)])},
                         {"user_s": 0.1, "system_s": 0.2}),
        P.SenderResult({3: P.Sent(1.5, 1000, "done", 1.6, 1.9, None, 1.9, [(1.5, 0), (1.8, 1)],
                                  4321.0, {"rtt_us": 4321}, None)},
                       {"user_s": 0.0, "system_s": 0.0}, {"a": {"x": 1}}, 7),
    ]


@pytest.mark.parametrize("msg", _messages(), ids=lambda m: type(m).__name__)
def test_every_message_round_trips(msg):
    line = P.encode(msg)
    assert "\n" not in line
    assert P.decode(line) == msg
    assert P.decode(line, (type(msg),)) == msg


def test_decode_names_what_is_wrong():
    job = P.encode(P.ReceiverJob(1, [P.Listen("n", "::1", 1)]))
    with pytest.raises(P.ProtocolError, match="Listen has no field 'adress'"):
        P.decode(job.replace('"addr"', '"adress"'))
    with pytest.raises(P.ProtocolError, match="Listen needs field 'addr'"):
        P.decode(job.replace('"addr":"::1",', ""))
    with pytest.raises(P.ProtocolError, match=r"ReceiverJob.listen\[0\].port: expected int"):
        P.decode(job.replace('"port":1', '"port":"1"'))
    with pytest.raises(P.ProtocolError, match="expected Start, got ReceiverJob"):
        P.decode(job, (P.Start,))
    with pytest.raises(P.ProtocolError, match="not hex"):
        P.decode('{"parent":1,"transfers":[{"id":1,"netns":"n","src":"a","dst":"b","port":1,'
                 '"paths":["zz"]}],"role":"sender"}')
    with pytest.raises(P.ProtocolError, match="not JSON"):
        P.decode("{nope")
    with pytest.raises(P.ProtocolError, match="not a message"):
        P.decode('{"hello": 1}')
    # a Failed is always accepted: the agent reports its error whatever was expected
    assert P.decode(P.encode(P.Failed("x")), (P.Start,)) == P.Failed("x")


# ----------------------------------------------------------------- the loop, over loopback
def test_roles_move_real_bytes_over_loopback():
    """A receiver and a sender in this process, in its own namespace (no root): two sized
    transfers complete (the receiver's one-byte answer), one endless transfer runs until the
    stop, one is cut at its ``until``; the window counts only the bytes inside it."""
    sw = NetnsSwitch()
    rjob = P.ReceiverJob(0, [P.Listen("", "::1", 0)], timeline=[2], sizes={1: 200_000,
                                                                           2: 50_000})
    rx = Receiver(rjob, sw)
    rx.setup()
    port = next(iter(rx.listeners.values())).getsockname()[1]
    base = dict(netns="", src="::1", dst="::1", port=port)
    sjob = P.SenderJob(0, [P.Transfer(1, size=200_000, **base),
                           P.Transfer(2, at=0.2, size=50_000, **base),
                           P.Transfer(3, **base),
                           P.Transfer(4, at=0.1, until=0.4, **base)], poll_ms=20.0)
    tx = Sender(sjob, sw)
    tx.setup()
    assert set(tx.ready) == {1, 3}  # the ones opening at the start are ready before it
    t0 = time.monotonic() + 0.1
    times = P.Times(t0, t0 + 0.5, t0 + 1.0, t0 + 1.2)
    got = {}
    th = threading.Thread(target=lambda: got.update(r=run_loop(rx, dataclasses.replace(
        times, stop=times.stop + 0.3))))
    th.start()
    sent = run_loop(tx, times)
    th.join()
    sw.close()
    recv = got["r"]
    s = sent.connections
    assert s[1].state == "done" and s[2].state == "done" and s[1].error is None
    assert recv.connections[1].bytes == 200_000 and recv.connections[2].bytes == 50_000
    assert recv.connections[1].done is not None and s[1].done >= recv.connections[1].done
    assert s[3].state == "open" and s[3].done is None  # endless: still running at the stop
    assert s[4].state == "cut" and s[4].cut - t0 == pytest.approx(0.4, abs=0.05)
    assert recv.connections[3].window_bytes > 0
    assert recv.connections[3].window_bytes < recv.connections[3].bytes  # only the window
    w0, w1 = recv.window
    assert w0 == pytest.approx(times.start, abs=0.05) and w1 == pytest.approx(times.end, abs=0.05)
    tl = recv.connections[2].timeline
    assert tl and tl[-1][1] == 50_000 and all(a[1] < b[1] for a, b in zip(tl, tl[1:]))
    assert s[2].arrival == pytest.approx(t0 + 0.2)
    assert [p for _, p in s[1].paths] == []  # no path asked: no SRH set


def test_a_reset_after_the_stop_cuts_the_transfer_and_never_fails_it():
    """Both roles stop at ``times.stop`` and the receiver closes abortively. A sender starved of
    CPU (Kdl 1 % at the defaults: 291 of 1,984 sr connections "failed" with ECONNRESET) still
    handles events after it and sees those resets: the transfer is cut with the run. Before the
    stop the same error is the transfer's own."""
    sw = NetnsSwitch()
    rx = Receiver(P.ReceiverJob(0, [P.Listen("", "::1", 0)]), sw)
    rx.setup()
    port = next(iter(rx.listeners.values())).getsockname()[1]
    base = dict(netns="", src="::1", dst="::1", port=port)
    now = time.monotonic()
    for times, want in ((P.Times(now - 3, now - 2, now - 1, now - 0.5), "cut"),
                        (P.Times(now + 1, now + 2, now + 3, now + 4), "error")):
        tx = Sender(P.SenderJob(0, [P.Transfer(1, **base)], poll_ms=20.0), sw)
        tx.setup()
        tx.start(times)
        c = tx.ready[1]
        tx._finish(c, time.monotonic(), "send: [Errno 104] Connection reset by peer")
        assert c.sent.state == want
        assert (c.sent.error is None) == (want == "cut")
        assert (c.sent.cut is not None) == (want == "cut")
    for s in rx.listeners.values():
        s.close()
    sw.close()


def test_the_receiver_drains_a_late_sender_instead_of_resetting_it():
    """The cause of those resets: a receiver that closes at its stop resets a sender still
    sending (starved of CPU, it reaches its own stop late). Here the sender stops a whole
    second after the receiver: the receiver reads on until the sender closes, so the transfer
    ends with the run, neither failed nor cut, and every byte sent was read."""
    sw = NetnsSwitch()
    rx = Receiver(P.ReceiverJob(0, [P.Listen("", "::1", 0)]), sw)
    rx.setup()
    port = next(iter(rx.listeners.values())).getsockname()[1]
    tx = Sender(P.SenderJob(0, [P.Transfer(1, "", "::1", "::1", port)], poll_ms=20.0), sw)
    tx.setup()
    t0 = time.monotonic() + 0.1
    rtimes = P.Times(t0, t0 + 0.2, t0 + 0.5, t0 + 0.6)
    got = {}
    th = threading.Thread(target=lambda: got.update(r=run_loop(rx, rtimes)))
    th.start()
    sent = run_loop(tx, dataclasses.replace(rtimes, stop=t0 + 1.6))  # a second late
    th.join()
    sw.close()
    s, r = sent.connections[1], got["r"].connections[1]
    assert s.state == "open" and s.error is None and s.cut is None
    assert got["r"].window[1] == pytest.approx(t0 + 0.5, abs=0.05)
    assert r.bytes > r.window_bytes > 0  # it read past the window, up to the sender's close
