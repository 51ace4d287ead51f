"""tpcstudy.export.addressing: the default plan (shape, stability, collisions) and user plans."""

from __future__ import annotations

import ipaddress
import json

import pytest

import tpcstudy
from tpcstudy import export as X
from tpcstudy.errors import PlanError
from tpcstudy.export import addressing as A

from helpers import ring5 as _ring

IP = ipaddress.IPv6Address
NET = ipaddress.IPv6Network


# ----------------------------------------------------------------- addressing
def test_default_plan_shape_and_stability():
    t1 = _ring()
    t2 = _ring(order=["c", "t", "b", "a", "s"])
    assert t1.names != t2.names
    p1, p2 = A.default_plan(tpcstudy.prune(t1)), A.default_plan(tpcstudy.prune(t2))
    assert p1.loopbacks == p2.loopbacks and p1.prefixes == p2.prefixes
    for r, a in p1.loopbacks.items():
        assert a in NET("fc00::/16") and int(a) & ((1 << 64) - 1) == 1
        (net,) = p1.prefixes[r]
        assert net.prefixlen == 64 and net.subnet_of(NET("fc00::/7"))
        assert net.network_address.packed[2:8] == a.packed[2:8]  # same hashed bits
    assert len(set(p1.loopbacks.values())) == 5
    # the tables agree too (same routes here; addresses from names only)
    e1 = X.path_table(t1, pairs=[("s", "t")]).entries[0]
    e2 = X.path_table(t2, pairs=[("s", "t")]).entries[0]
    assert e1.prefix == e2.prefix and e1.paths[0].segments == e2.paths[0].segments
    # another topology name, other addresses
    assert A.default_plan(_ring(name="other")).loopbacks["s"] != p1.loopbacks["s"]


def test_default_plan_collisions(monkeypatch):
    real = A._h

    def clashing(*parts):  # every router hashes to the same value on the first attempt
        return bytes(32) if len(parts) == 3 and parts[2] == "0" else real(*parts)

    monkeypatch.setattr(A, "_h", clashing)
    p1 = A.default_plan(_ring())
    p2 = A.default_plan(_ring(order=["c", "t", "b", "a", "s"]))
    assert len(set(p1.loopbacks.values())) == 5 and p1.loopbacks == p2.loopbacks
    assert p1.loopbacks["a"].packed[4:8] == bytes(4)  # 'a' sorts first: it keeps attempt 0


def test_user_plan(tmp_path):
    t = _ring()
    good = {"loopbacks": {r: f"2001:db8::{i + 1}" for i, r in enumerate(t.names)},
            "prefixes": {"t": ["2001:db8:1:1::/64", "2001:db8:1:2::/64"], "a": "2001:db8:2::/64",
                         "s": "2001:db8:3::/64", "b": "2001:db8:4::/64", "c": "2001:db8:5::/64"}}
    f = tmp_path / "plan.json"
    f.write_text(json.dumps(good))
    table = X.path_table(t, plan=f)
    # destinations: the routers the plan gives prefixes to, one entry per prefix
    assert sorted({(e.destination, str(e.prefix)) for e in table}) == [
        ("a", "2001:db8:2::/64"), ("b", "2001:db8:4::/64"), ("c", "2001:db8:5::/64"),
        ("s", "2001:db8:3::/64"), ("t", "2001:db8:1:1::/64"), ("t", "2001:db8:1:2::/64")]
    assert table.entries[0].paths[0].segments[0] == IP("2001:db8::2")
    # the written plan reads back as the same plan
    X.write_paths(table, tmp_path / "out")
    back = A.read_plan(tmp_path / "out" / "plan.json")
    assert back.loopbacks == table.plan.loopbacks and back.prefixes == table.plan.prefixes

    def bad(change, match):
        d = json.loads(json.dumps(good))
        change(d)
        f.write_text(json.dumps(d))
        with pytest.raises(PlanError, match=match) as ei:
            X.path_table(t, plan=f)
        assert str(f) in str(ei.value)

    bad(lambda d: d["loopbacks"].update(s="2001:db8::zz"), r"loopbacks\['s'\] = '2001:db8::zz'")
    bad(lambda d: d["loopbacks"].update(s="10.0.0.1"), "IPv4")
    bad(lambda d: d["loopbacks"].update(s="2001:db8::2"), "given to both")
    bad(lambda d: d["loopbacks"].update(nowhere="2001:db8::99"), "'nowhere' is not in topology")
    bad(lambda d: d["prefixes"].update(t=["2001:db8:1:1::1/64"]), "host bits set")
    bad(lambda d: d["prefixes"].update(a=["2001:db8:1::/48"]), "overlaps")
    bad(lambda d: d["loopbacks"].pop("b"), "no loopback for router 'b'")
    # an edge router without a prefix is not silently dropped from the destinations
    bad(lambda d: d["prefixes"].pop("s"), "no host prefix for edge router 's'")
    bad(lambda d: d.update(extra=1), "unknown key 'extra'")
    f.write_text("{not json")
    with pytest.raises(PlanError, match="plan.json:1: not valid JSON"):
        A.read_plan(f)
