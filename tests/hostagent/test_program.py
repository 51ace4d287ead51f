"""The host agent's BPF programs: built for the three exported layouts (clang), their own maps
laid out as the C structs, and (root) the tc program run by the kernel on hand-made IPv6/TCP
packets (BPF_PROG_TEST_RUN through ``bpftool prog run``): the SRH inserted exactly, the
destination the first segment, the payload length grown, for 1, 2 and 9 segments."""

from __future__ import annotations

import ipaddress
import os
import struct
import subprocess

import pytest

from tpcstudy.export import VARIANTS
from tpcstudy.export.layout import srh_bytes
from tpcstudy.hostagent import maps as M
from tpcstudy.hostagent.bpffs import run_steps
from tpcstudy.hostagent.program import LAYOUTS, build, object_for

REQUIRED = os.environ.get("TPCSTUDY_EMULATE_REQUIRED") == "1"


def _need(what: str, ok: bool) -> None:
    if not ok:
        if REQUIRED:
            pytest.fail(f"{what} (TPCSTUDY_EMULATE_REQUIRED=1)")
        pytest.skip(what)


def test_layouts_are_the_exported_variants():
    assert {v.value_size: v.map_name for v in VARIANTS.values()} == LAYOUTS


def test_own_maps_match_the_c_structs():
    assert M.CONN_KEY.size == 36  # struct conn_key: 2 x 16 + 2 x 2
    assert M.CONN_VALUE.size == 224  # struct conn: 4 x 4 + 8 + 16 + 168 + 4 x 4
    assert M.CONFIG.size == 36
    cfg = M.config_bytes(M.parse_slot_policy("weighted:0.25", nrto=3), mtu=1500, max_srh=56)
    assert struct.unpack("<9I", cfg) == (2, 0, 1 << 18, 3, 1500, 56, 0, 0, 0)
    cfg = M.config_bytes(M.parse_slot_policy("first"), mtu=1500, max_srh=56, on_update="keep")
    assert struct.unpack("<9I", cfg)[6] == 1
    cfg = M.config_bytes(M.parse_slot_policy("wrr"), mtu=9000, max_srh=56,
                         rto_min=M.rto_min_us(20))
    assert struct.unpack("<9I", cfg)[8] == 20000  # microseconds, TCP_BPF_RTO_MIN's unit
    for bad in (-1, 999, 200001):
        with pytest.raises(Exception, match="minimum RTO"):
            M.config_bytes(M.parse_slot_policy("first"), mtu=1500, max_srh=56, rto_min=bad)
    with pytest.raises(Exception, match="on-update"):
        M.config_bytes(M.parse_slot_policy("first"), mtu=1500, max_srh=56, on_update="later")
    assert M.parse_slot_policy("slot:3").slot == 3 and M.parse_slot_policy("wrr").kind == "wrr"
    for bad in ("slot:9", "slot:x", "weighted:2", "fastest", "first:1"):
        with pytest.raises(Exception, match="slot|gamma|policy|choose"):
            M.parse_slot_policy(bad)
    key = M.conn_key("fd00::1", "fd00::2", 40000, 5201)
    assert key[32:] == bytes.fromhex("9c40 1451")  # ports in network order
    field = srh_bytes(["fc00::a", "fc00::b"])
    val = M.conn_value(field, slot=2)
    ln, slot, moves, kernel, dkey, first, srh, gen, room, stale, _ = M.CONN_VALUE.unpack(val)
    assert (ln, slot, kernel) == (len(field), 2, 0)
    assert (gen, room, stale) == (0, len(field), 0)
    assert first == ipaddress.IPv6Address("fc00::a").packed  # segments[n]: the first visited


def test_objects_build_for_every_layout(tmp_path):
    from tpcstudy.hostagent.program import _missing

    _need(f"cannot build BPF objects: {_missing()}", not _missing())
    made = build(tmp_path)
    assert sorted(p.name for p in made) == [f"tpc_hostagent-{s}.o" for s in sorted(LAYOUTS)]
    for p in made:  # an ELF object for the BPF machine (EM_BPF = 247)
        head = p.read_bytes()[:20]
        assert head[:4] == b"\x7fELF" and struct.unpack("<H", head[18:20])[0] == 247


def _packet(segs_after: bytes = b"", payload: bytes = b"hello, tpc") -> bytes:
    src = ipaddress.IPv6Address("fd00:1::1").packed
    dst = ipaddress.IPv6Address("fd00:2::1").packed
    tcp = struct.pack(">HHIIBBHHH", 40000, 5201, 1, 0, 5 << 4, 0x18, 65535, 0xbeef, 0)
    ip6 = struct.pack(">IHBB", 6 << 28, len(tcp) + len(payload), 6, 64) + src + dst
    eth = bytes.fromhex("020000000002" "020000000001" "86dd")
    return eth + ip6 + tcp + payload


@pytest.mark.parametrize("n", [1, 2, 9])
def test_tc_inserts_the_srh(tmp_path, n):
    _need("needs root (BPF_PROG_TEST_RUN)", os.geteuid() == 0)
    segs = [f"fc00::{i + 1:x}" for i in range(n)]  # visit order, egress last
    field = srh_bytes(segs)
    obj = object_for(1556)
    pkt = _packet()
    (tmp_path / "in").write_bytes(pkt)
    key = M.conn_key("fd00:1::1", "fd00:2::1", 40000, 5201)
    val = M.conn_value(field)
    run_steps([["mkdir", "/sys/fs/bpf/t"], ["mkdir", "/sys/fs/bpf/tpc"],
               ["bpftool", "prog", "loadall", str(obj), "/sys/fs/bpf/t", "pinmaps",
                "/sys/fs/bpf/tpc"],
               ["bpftool", "map", "update", "pinned", "/sys/fs/bpf/tpc/tpc_conns", "key", "hex",
                *key.hex(" ").split(), "value", "hex", *val.hex(" ").split()],
               ["bpftool", "prog", "run", "pinned", "/sys/fs/bpf/t/tpc_egress", "data_in",
                str(tmp_path / "in"), "data_out", str(tmp_path / "out")]], private=True)
    out = (tmp_path / "out").read_bytes()
    L = 8 + 16 * (n + 1)
    assert len(out) == len(pkt) + L
    assert out[:14] == pkt[:14]  # no route to fc00::/16 in a test run: left on its way
    ip6, srh, rest = out[14:54], out[54:54 + L], out[54 + L:]
    assert struct.unpack(">H", ip6[4:6])[0] == struct.unpack(">H", pkt[18:20])[0] + L
    assert ip6[6] == 43 and ip6[7] == 64  # next header: routing; hop limit kept
    assert ip6[8:24] == pkt[22:38]  # source unchanged
    assert ip6[24:40] == ipaddress.IPv6Address(segs[0]).packed  # to the first segment
    want = bytearray(field)
    want[0] = 6  # next header after the SRH: TCP
    want[8:24] = pkt[38:54]  # segments[0]: the real destination
    assert srh == bytes(want)
    assert srh[3] == srh[4] == n and srh[1] == 2 * (n + 1) and srh[2] == 4
    assert rest == pkt[54:]  # TCP header (checksum included) and payload unchanged


def test_tc_leaves_other_packets_alone(tmp_path):
    _need("needs root (BPF_PROG_TEST_RUN)", os.geteuid() == 0)
    obj = object_for(1556)
    pkt = _packet()
    (tmp_path / "in").write_bytes(pkt)
    run_steps([["mkdir", "/sys/fs/bpf/t"], ["mkdir", "/sys/fs/bpf/tpc"],
               ["bpftool", "prog", "loadall", str(obj), "/sys/fs/bpf/t", "pinmaps",
                "/sys/fs/bpf/tpc"],
               ["bpftool", "prog", "run", "pinned", "/sys/fs/bpf/t/tpc_egress", "data_in",
                str(tmp_path / "in"), "data_out", str(tmp_path / "out")]], private=True)
    assert (tmp_path / "out").read_bytes() == pkt  # no connection stored: untouched


def test_every_layout_passes_the_verifier():
    _need("needs root (loading BPF programs)", os.geteuid() == 0)
    for size in sorted(LAYOUTS):
        outs = run_steps([["mkdir", "/sys/fs/bpf/p"], ["mkdir", "/sys/fs/bpf/tpc"],
                          ["bpftool", "prog", "loadall", str(object_for(size)), "/sys/fs/bpf/p",
                           "pinmaps", "/sys/fs/bpf/tpc"],
                          ["expect-value-size", f"/sys/fs/bpf/tpc/{LAYOUTS[size]}", str(size)],
                          ["bpftool", "-j", "prog", "show", "pinned", "/sys/fs/bpf/p/tpc_sockops"]],
                         private=True)
        assert '"type":"sock_ops"' in outs[-1].replace(" ", "")


def test_layout_mismatch_is_refused_before_attaching():
    _need("needs root (loading BPF programs)", os.geteuid() == 0)
    from tpcstudy.errors import HostAgentError

    with pytest.raises(HostAgentError, match="1556-byte values, the table 1684-byte ones"):
        run_steps([["mkdir", "/sys/fs/bpf/p"], ["mkdir", "/sys/fs/bpf/tpc"],
                   ["bpftool", "prog", "loadall", str(object_for(1556)), "/sys/fs/bpf/p",
                    "pinmaps", "/sys/fs/bpf/tpc"],
                   ["expect-value-size", "/sys/fs/bpf/tpc/dest_map", "1684"],
                   ["bpftool", "cgroup", "attach", "/sys/fs/cgroup", "sock_ops", "pinned",
                    "/sys/fs/bpf/p/tpc_sockops", "multi"]], private=True)
    # the attach after the refusal never ran
    out = subprocess.run(["bpftool", "-j", "cgroup", "show", "/sys/fs/cgroup"],
                         capture_output=True, text=True).stdout
    assert "tpc_sockops" not in out
