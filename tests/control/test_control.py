"""The controller's logic without root: event lines (strict), events -> links down -> tables
(both reactions) -> push plan (only hosts whose records changed), hand-worked on a square
A-B-C-D-A, the reoptimised table cross-checked on Abilene, the command push's argv."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tpcstudy.control.events import LineSource, parse_line
from tpcstudy.control.push import CommandPush, command_argv
from tpcstudy.control.run import Controller
from tpcstudy.control.tables import (
    TableState,
    host_records,
    hosts_table,
    push_plan,
    reoptimised_table,
)
from tpcstudy.errors import UsageError
from tpcstudy.export.addressing import default_plan
from tpcstudy.export.table import Entry, PathRecord, PathTable
from tpcstudy.topology import RawEdge, build_topology, without_links

VARIANT = "exp3_lowest_completion"


def square():
    return build_topology("square", ["A", "B", "C", "D"],
                          [RawEdge(0, 1), RawEdge(1, 2), RawEdge(2, 3), RawEdge(3, 0)])


def base_table(t):
    plan = default_plan(t, edge_routers=t.names)

    def path(src, wps, w):
        return PathRecord([src] + wps, [plan.loopback(x) for x in wps], list(wps), 0, 0, 0,
                          weight=w)

    entries = [Entry("A", "C", plan.prefixes["C"][0], [path("A", ["B", "C"], 3.0),
                                                       path("A", ["D", "C"], 1.0)]),
               Entry("B", "A", plan.prefixes["A"][0], [path("B", ["A"], 1.0),
                                                       path("B", ["C", "D", "A"], 1.0)]),
               Entry("D", "C", plan.prefixes["C"][0], [path("D", ["C"], 1.0)])]
    return PathTable("square", entries, plan, k=4, max_paths=8), plan


class FakePush:
    needs_files = False

    def __init__(self):
        self.pushed = []

    def check(self, hosts):
        pass

    def push(self, host, records, table):
        self.pushed.append((host, records))
        return {"host": host, "ok": True, "swap_ms": 0.01, "generation": len(self.pushed)}


def test_parse_line_strict():
    t = square()
    ev = parse_line("down B A  # the cut", t, "stdin", 1)
    assert (ev.kind, ev.u, ev.v) == ("down", 0, 1)
    assert parse_line("   # only a comment", t, "stdin", 2) is None
    for bad, msg in [("cut A B", "stdin:7: expected 'down A B'"),
                     ("down A", "stdin:7: expected"),
                     ("down A Z", "stdin:7: router 'Z' is not in square"),
                     ("up A C", "stdin:7: A and C share no link"),
                     ("down A A", "share no link")]:
        with pytest.raises(UsageError, match=msg):
            parse_line(bad, t, "stdin", 7)


def test_line_source_names_the_bad_line(tmp_path):
    t = square()
    r, w = os.pipe()
    os.write(w, b"down A B\n\n# comment\nup A B\nup A Q\n")
    os.close(w)
    evs: list = []
    with os.fdopen(r, "rb") as stream:
        src = LineSource(stream, t, "events.txt")
        while not src.eof:
            evs += src.poll(0.5)
        # the events before the bad line are kept, the bad one is named with its line number
        assert [(e.kind, e.source) for e in evs] == [("down", "events.txt:1"),
                                                     ("up", "events.txt:4")]
        assert "events.txt:5: router 'Q'" in str(src.error)
    evs = []
    f = tmp_path / "ev.txt"
    f.write_bytes(b"down A B\n\n# c\nup B A")
    with open(f, "rb") as fh:
        src = LineSource(fh, t, "ev.txt")
        while not src.eof:
            evs += src.poll(0.2)
    assert [(e.kind, e.u, e.v, e.source) for e in evs] == [("down", 0, 1, "ev.txt:1"),
                                                          ("up", 0, 1, "ev.txt:4")]


def test_hosts_reaction_hand_worked():
    t = square()
    base, plan = base_table(t)
    got = hosts_table(t, base, [(0, 1)])  # A-B down
    by = {(e.source, e.destination): e for e in got.entries}
    # A->C: the path over B is gone; the one over D carries the entry's whole weight (3 + 1)
    assert [(p.waypoints, p.weight) for p in by["A", "C"].paths] == [(["D", "C"], 4.0)]
    # B->A: the direct path crossed A-B; B -> C -> D -> A stays
    assert [p.waypoints for p in by["B", "A"].paths] == [["C", "D", "A"]]
    # D->C never crossed A-B: unchanged
    assert by["D", "C"].paths == base.select("D").entries[0].paths
    # both ways down around A: B->A has nothing left, keeps its plain IGP path
    both = hosts_table(t, base, [(0, 1), (2, 3)])
    ba = {(e.source, e.destination): e for e in both.entries}["B", "A"]
    assert [p.waypoints for p in ba.paths] == [["A"]]


def test_push_plan_only_changed_hosts():
    t = square()
    base, plan = base_table(t)
    state = TableState(t, plan, [("A", "C"), ("B", "A"), ("D", "C")], ["A", "B", "D"], base,
                       VARIANT, reaction="hosts")
    assert push_plan(state.records, state.records) == []
    hosts, new = state.plan_push(hosts_table(t, base, [(0, 1)]))
    assert hosts == ["A", "B"]  # D's entry does not cross A-B
    assert new["D"] == host_records(base, "D", VARIANT)


def test_controller_events_to_pushes():
    t = square()
    base, plan = base_table(t)
    state = TableState(t, plan, [("A", "C"), ("B", "A"), ("D", "C")], ["A", "B", "D"], base,
                       VARIANT, reaction="hosts")
    fake = FakePush()
    c = Controller(state, fake)
    ev = parse_line("down A B", t, "stdin", 1)
    rec = c.handle([ev])
    assert rec["pushed"] == ["A", "B"] and rec["down"] == "A-B"
    assert {"detect_ms", "compute_ms", "push_ms", "swap_ms", "total_ms"} <= set(rec)
    again = c.handle([parse_line("down B A", t, "stdin", 2)])
    assert again.get("unchanged") and len(fake.pushed) == 2
    back = c.handle([parse_line("up A B", t, "stdin", 3)])
    assert back["pushed"] == ["A", "B"] and back["down"] == ""
    assert dict(fake.pushed[-1][1]) == dict(host_records(base, "B", VARIANT))
    c.close()


def test_reoptimised_avoids_the_cut_and_matches_the_lp(zoo_installed):
    from tpcstudy import max_flow, prune, read_topology
    t = prune(read_topology("zoo/Abilene"))
    plan = default_plan(t)
    pairs = [(s, d) for s in t.edge_routers for d in t.edge_routers if s != d]
    a, b = t.link_u[0].item(), t.link_v[0].item()
    tab = reoptimised_table(t, plan, pairs, [(a, b)], k=4, paths=8)
    g = without_links(t, [(a, b)])
    bad = {x for x in range(2 * t.num_links)
           if {int(t.arc_src[x]), int(t.arc_dst[x])} == {a, b}}
    for e in tab.entries:
        for p in e.paths:  # on the failed graph no route of the table uses the cut link
            assert all({p.nodes[i], p.nodes[i + 1]} != {t.names[a], t.names[b]}
                       for i in range(len(p.nodes) - 1))
    assert bad
    assert tab.meta.get("select") == "maxflow" or "maxflow" in json.dumps(tab.meta)
    lp = max_flow(g, pairs, model="sr", k=4)
    assert lp.value > 0


def test_command_argv_items_stay_items(tmp_path):
    argv = command_argv(["ssh", "{host}", "tpcstudy", "agent", "update", "tpc", "--table",
                         "{table}", "--json"], "a host; rm -rf /", "/t/gen-1")
    assert argv[1] == "a host; rm -rf /" and argv[7] == "/t/gen-1"
    with pytest.raises(UsageError):
        command_argv([], "h", "t")
    script = tmp_path / "fake.py"
    script.write_text("import json, sys; print(json.dumps({'swap_ms': 0.5, 'generation': 3,"
                      " 'host': sys.argv[1]}))\n")
    p = CommandPush([sys.executable, str(script), "{host}", "{table}"])
    r = p.push("Chicago", [], tmp_path)
    assert r["ok"] and r["swap_ms"] == 0.5 and r["generation"] == 3
    bad = CommandPush([sys.executable, "-c", "import sys; sys.exit('nope')"]).push("x", [], None)
    assert not bad["ok"] and "nope" in bad["error"]


def test_transition_safe_orders_paths_that_work_before_the_igp():
    from tpcstudy.control.tables import transition_safe
    t = square()
    base, plan = base_table(t)
    g = without_links(t, [(0, 1)])
    # A->C over B (crosses A-B) and over D: the one over D first; B->A direct (crosses) dropped
    # to the back, B->C->D->A first
    out = transition_safe(base, g, t, frozenset({(0, 1)}))
    by = {(e.source, e.destination): e for e in out.entries}
    assert [p.waypoints for p in by["A", "C"].paths] == [["D", "C"], ["B", "C"]]
    assert [p.waypoints for p in by["B", "A"].paths] == [["C", "D", "A"], ["A"]]


def test_hold_unsafe_keeps_the_slots_and_zeroes_the_unsafe_weights():
    """The two-phase push (emulate failures --controller-at both): at the event the paths not
    transition-safe weigh 0 in their slots; the table after the IGP has the same paths in the
    same slots with their weights, so no connection moves (the same SRH in its slot)."""
    from tpcstudy.control.tables import transition_safe
    t = square()
    base, plan = base_table(t)
    g = without_links(t, [(0, 1)])
    held = transition_safe(base, g, t, frozenset({(0, 1)}), hold_unsafe=True)
    full = transition_safe(base, g, t, frozenset({(0, 1)}))
    for eh, ef in zip(held.entries, full.entries):
        assert [p.waypoints for p in eh.paths] == [p.waypoints for p in ef.paths]
    by = {(e.source, e.destination): e for e in held.entries}
    assert [p.weight for p in by["A", "C"].paths][1] == 0.0  # over B: crosses A-B
    assert by["A", "C"].paths[0].weight > 0
    full_by = {(e.source, e.destination): e for e in full.entries}
    assert full_by["A", "C"].paths[1].weight > 0


def test_reoptimised_replaces_only_affected_entries():
    from tpcstudy.control.tables import keep_unaffected
    t = square()
    base, plan = base_table(t)
    new = hosts_table(t, base, [(0, 1)])  # any table of the failed graph: entries differ
    out = keep_unaffected(t, base, new, [(0, 1)])
    by = {(e.source, e.destination): e for e in out.entries}
    newby = {(e.source, e.destination): e for e in new.entries}
    assert by["A", "C"] is newby["A", "C"] and by["B", "A"] is newby["B", "A"]
    assert by["D", "C"] is base.entries[2]  # D -> C never crossed A-B: untouched


def test_netlink_source_hands_each_event_to_the_igp() -> None:
    """``control --network``: every link event read from the routers also reaches the
    emulated IGP (``Igp.event``), in order, before the controller sees it."""
    from types import SimpleNamespace

    from tpcstudy.control.events import NetlinkSource

    evs = [SimpleNamespace(kind="down", u=1, v=4, at=10.0, netns="p-r1", interface="to4"),
           SimpleNamespace(kind="up", u=1, v=4, at=11.5, netns="p-r4", interface="to1")]
    watcher = SimpleNamespace(poll=lambda timeout: list(evs))
    seen = []
    got = NetlinkSource(watcher, lambda *e: seen.append(e)).poll(0.1)
    assert seen == [("down", 1, 4, 10.0), ("up", 1, 4, 11.5)]
    assert [(e.kind, e.u, e.v, e.source) for e in got] == [
        ("down", 1, 4, "netlink p-r1/to4"), ("up", 1, 4, "netlink p-r4/to1")]
    assert len(NetlinkSource(watcher).poll(0.1)) == 2  # no IGP: the events alone
