"""The controller's logic without root: event lines (strict), events -> links down -> tables
(both reactions) -> push plan (only hosts whose records changed), hand-worked on a square
A-B-C-D-A, the reoptimised table cross-checked on Abilene, the command push's argv; the one
loop (``tpcstudy control`` and ``emulate failures`` run it): events -> phases
(``--controller-at event|igp|both``, the IGP's state, scripted) -> steps -> push plan."""

from __future__ import annotations

import json
import os
import sys
import threading

import pytest

from tpcstudy.control.events import Event, LineSource, parse_line
from tpcstudy.control.push import CommandPush, command_argv
from tpcstudy.control.run import AT, Controller, Loop, Phases, Step
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
    # A->C over B (crosses A-B) and over D: the one over D first (the one over B goes A-D-C-B-C
    # on the failed graph, a route through C twice: it cannot be pinned and stays, behind);
    # B->A direct (crosses) routes B-C-D-A on the failed graph, which its other path [C, D, A]
    # pins already: that path gets both weights, 1 + 1
    out = transition_safe(base, g, t, frozenset({(0, 1)}))
    by = {(e.source, e.destination): e for e in out.entries}
    assert [p.waypoints for p in by["A", "C"].paths] == [["D", "C"], ["B", "C"]]
    assert [(p.waypoints, p.weight) for p in by["B", "A"].paths] == [(["C", "D", "A"], 2.0)]


def test_transition_safe_pins_every_route_of_a_path_over_the_cut():
    """The six-paths cut (A-P1, the IGP's path): the reoptimised LP gives C1 -> S1 its plain
    path (one segment, S1) at weight 5, which the failed graph routes over P2..P6 (ECMP, 1/5
    each) and the intact routing over P1. It becomes five paths [Pj, S1] at weight 1 (C1 -> Pj
    is C1-A-Pj at cost 11 on both graphs, C1-A-P1-B-Pj costs 13; Pj -> S1 is Pj-B-S1), so the
    connections the swap moves spread over the five links; until 2026-11-27 they all went to
    one path, C1-A-P2-B-S1 pinned hop by hop, beside C2's three, and 1-2 of the 7 on that link
    stayed in backoff to the end of the run. A small safe path beside a heavy unsafe one gets
    its share of it (C2 -> S2: [P3, S2] 0.5 + 2.5 / 5), the other routes follow; nothing is
    held back, so the settle push changes nothing."""
    from tpcstudy.control.tables import branches, pin, transition_safe
    from tpcstudy.emulate.network.handmade import six_paths

    sc = six_paths()
    t, plan = sc.topology, sc.plan

    def path(src, wps, w):
        return PathRecord([src] + wps, [plan.loopback(x) for x in wps], list(wps), 0, 0, 0,
                          weight=w)

    cut = (t.index_of("A"), t.index_of("P1"))
    g = without_links(t, [cut])
    ids = [t.index_of(x) for x in ("C1", "A", "P2", "B", "S1")]
    routes = branches(g, "C1", ["S1"])
    assert routes is not None and sorted(r for r, _ in routes) == sorted(
        [ids[:2] + [t.index_of(f"P{j}")] + ids[3:] for j in range(2, 7)])
    assert all(abs(share - 0.2) < 1e-12 for _, share in routes)
    assert branches(t, "C1", ["S1"]) == [([ids[0], ids[1], t.index_of("P1"), ids[3], ids[4]],
                                          1.0)]
    assert pin(t, g, ids) == [t.index_of("P2"), t.index_of("S1")]
    assert pin(t, g, ids[:2] + [ids[1]]) is None  # a route through A twice
    now = PathTable("six-paths", [
        Entry("C1", "S1", plan.prefixes["S1"][0], [path("C1", ["S1"], 5.0)]),
        Entry("C2", "S2", plan.prefixes["S2"][0], [path("C2", ["P3", "S2"], 0.5),
                                                   path("C2", ["S2"], 2.5)])],
        plan, k=4, max_paths=8)
    held = transition_safe(now, g, t, frozenset({cut}), hold_unsafe=True)
    full = transition_safe(now, g, t, frozenset({cut}))
    by = {(e.source, e.destination): e for e in held.entries}
    c1, c2 = by["C1", "S1"].paths, by["C2", "S2"].paths
    assert [p.waypoints for p in c1] == [[f"P{j}", "S1"] for j in range(2, 7)]
    assert [p.weight for p in c1] == pytest.approx([1.0] * 5, abs=1e-12)
    assert [p.waypoints for p in c2] == [["P3", "S2"]] + [[f"P{j}", "S2"] for j in (2, 4, 5, 6)]
    assert [p.weight for p in c2] == pytest.approx([1.0] + [0.5] * 4, abs=1e-12)
    assert by["C1", "S1"].paths[0].nodes == ["C1", "A", "P2", "B", "S1"]
    assert host_records(held, "C1", VARIANT) == host_records(full, "C1", VARIANT)
    assert host_records(held, "C2", VARIANT) == host_records(full, "C2", VARIANT)


def test_hold_unsafe_leaves_the_unsafe_paths_out_and_keeps_the_safe_slots():
    """The two-phase push (--controller-at both): at the event the paths not transition-safe
    are left out; the table after the IGP has the same safe paths in the same slots, then the
    others, so no connection moves (the same SRH in its slot)."""
    from tpcstudy.control.tables import transition_safe
    t = square()
    base, plan = base_table(t)
    g = without_links(t, [(0, 1)])
    held = transition_safe(base, g, t, frozenset({(0, 1)}), hold_unsafe=True)
    full = transition_safe(base, g, t, frozenset({(0, 1)}))
    for eh, ef in zip(held.entries, full.entries):
        assert [p.waypoints for p in eh.paths] == [p.waypoints for p in ef.paths][:len(eh.paths)]
    by = {(e.source, e.destination): e for e in held.entries}
    assert [(p.waypoints, p.weight) for p in by["A", "C"].paths] == [(["D", "C"], 1.0)]
    full_by = {(e.source, e.destination): e for e in full.entries}
    assert [p.waypoints for p in full_by["A", "C"].paths] == [["D", "C"], ["B", "C"]]


def test_hold_unsafe_never_keeps_a_connection_on_a_path_over_the_cut():
    """A connection keeps its path through a swap when its slot holds the same SRH (the agent's
    same_srh, whatever the slot's weight). A table whose entry A->C lists the safe path over D
    first and the one over B (routed over A-B until the IGP re-converges) second, as the host
    holds it now: held at weight 0 in its slot, slot 1 would keep its SRH and a connection on
    it would stay in the black hole; left out, slot 1 is empty and the connection moves."""
    from tpcstudy.control.tables import transition_safe
    t = square()
    plan = default_plan(t, edge_routers=t.names)

    def path(wps, w):
        return PathRecord(["A"] + wps, [plan.loopback(x) for x in wps], list(wps), 0, 0, 0,
                          weight=w)

    now = PathTable("square", [Entry("A", "C", plan.prefixes["C"][0],
                                     [path(["D", "C"], 1.0), path(["B", "C"], 1.0)])],
                    plan, k=4, max_paths=8)
    held = transition_safe(now, without_links(t, [(0, 1)]), t, frozenset({(0, 1)}),
                           hold_unsafe=True)
    before, after = host_records(now, "A", VARIANT), host_records(held, "A", VARIANT)
    from tpcstudy.export.layout import decode_value
    old, new = decode_value(before[0][1], VARIANT), decode_value(after[0][1], VARIANT)
    assert [p.slot for p in old.paths] == [0, 1] and [p.slot for p in new.paths] == [0]
    assert new.paths[0].segments == old.paths[0].segments  # the safe path keeps slot 0


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


# --------------------------------------------------------------- the loop and its phases
def ev(kind: str, at: float, u: int = 0, v: int = 1) -> Event:
    return Event(kind, u, v, at, f"test:{at}")


class FakeIgp:
    """Re-converged (for every event read before ``since``) once ``done`` is at least it."""

    def __init__(self) -> None:
        self.done = -1.0
        self.asked: list = []

    def settled(self, since: float) -> bool:
        self.asked.append(since)
        return self.done >= since


def test_at_names_match_the_cli_choices():
    from tpcstudy.cli import build_parser
    for verb in (["control"], ["emulate", "failures"]):
        p = build_parser()
        for a in verb:
            p = next(x for x in p._actions if hasattr(x, "choices") and isinstance(
                x.choices, dict) and a in x.choices).choices[a]
        opt = next(x for x in p._actions if "--controller-at" in x.option_strings)
        assert tuple(opt.choices) == AT and opt.default == "both"
        assert any("--igp-delay" in x.option_strings for x in p._actions)


def test_event_handles_each_event_at_once_with_every_weight():
    ph = Phases("event", FakeIgp().settled)
    steps = ph.steps([ev("down", 1.0), ev("up", 2.0)])
    assert steps == [Step("handle", (ev("down", 1.0),)), Step("handle", (ev("up", 2.0),))]
    assert not ph.busy and ph.steps([]) == []


def test_igp_holds_the_events_until_the_igp_has_their_routes():
    igp = FakeIgp()
    ph = Phases("igp", igp.settled)
    assert ph.steps([ev("down", 1.0)]) == [] and ph.busy
    igp.done = 0.5  # an earlier convergence: not this event's
    assert ph.steps([]) == []
    assert ph.steps([ev("down", 1.2, 2, 3)]) == []
    igp.done = 1.1  # converged after the first event, not the second: still waiting
    assert ph.steps([]) == []
    igp.done = 1.3  # both in the routes: one recomputation of both events, every weight
    assert ph.steps([]) == [Step("handle", (ev("down", 1.0), ev("down", 1.2, 2, 3)))]
    assert not ph.busy


def test_both_pushes_held_weights_at_once_then_settles_once():
    igp = FakeIgp()
    ph = Phases("both", igp.settled)
    assert ph.steps([ev("down", 1.0)]) == [Step("handle", (ev("down", 1.0),), hold=True)]
    assert ph.busy and ph.steps([]) == []
    # a second event before the IGP settled: handled at once too; the settle waits for it
    assert ph.steps([ev("down", 1.5, 2, 3)]) == [Step("handle", (ev("down", 1.5, 2, 3),),
                                                      hold=True)]
    igp.done = 1.2
    assert ph.steps([]) == []
    igp.done = 1.6
    assert ph.steps([]) == [Step("settle")]
    assert not ph.busy and ph.steps([]) == []  # settled once


def test_no_igp_both_keeps_the_held_weights_and_igp_is_refused():
    ph = Phases("both", None)
    assert ph.steps([ev("down", 1.0)]) == [Step("handle", (ev("down", 1.0),), hold=True)]
    assert ph.steps([]) == []  # never settles: the unsafe paths stay at weight 0
    with pytest.raises(UsageError, match="--controller-at igp"):
        Phases("igp", None)
    with pytest.raises(UsageError, match="--controller-at 'soon'"):
        Phases("soon", None)


def test_after_delay_settles_delay_seconds_after_the_last_event():
    now = [10.0]
    ph = Phases.after_delay("both", 0.2, clock=lambda: now[0])
    assert ph.steps([ev("down", 10.0)])[0].hold
    now[0] = 10.19
    assert ph.steps([]) == []
    now[0] = 10.2
    assert ph.steps([]) == [Step("settle")]


class ScriptedSource:
    """Returns ``script[i]`` at its i-th poll after calling ``before[i]`` (if any); then sets
    ``stop``."""

    def __init__(self, script, before, stop):
        self.script, self.before, self.stop = list(script), dict(before), stop
        self.i = 0
        self.eof = False

    def poll(self, timeout):
        if self.i >= len(self.script):
            self.stop.set()
            return []
        if self.i in self.before:
            self.before[self.i]()
        out = self.script[self.i]
        self.i += 1
        return out


def house():
    """The square with a roof E over A-B: without A-B a ring of five remains (the failed
    graph keeps every router; the square alone would prune to nothing)."""
    return build_topology("house", ["A", "B", "C", "D", "E"],
                          [RawEdge(0, 1), RawEdge(1, 2), RawEdge(2, 3), RawEdge(3, 0),
                           RawEdge(0, 4), RawEdge(4, 1)])


def _controller():
    t = house()
    base, plan = base_table(t)
    state = TableState(t, plan, [("A", "C"), ("B", "A"), ("D", "C")], ["A", "B", "D"], base,
                       VARIANT, reaction="reoptimised")
    fake = FakePush()
    return Controller(state, fake), fake, base


def _slots(records, plan):
    """Per destination router: each valid slot's waypoints (names) and weight."""
    from tpcstudy.export.layout import decode_value
    name = {plan.loopback(r): r for r in plan.loopbacks}
    dest = {p.network_address: r for r, ps in plan.prefixes.items() for p in ps}
    out = {}
    for _k, v in records:
        d = decode_value(v, VARIANT)
        out[dest[d.dest]] = [([name[x] for x in p.segments], round(w, 6))
                             for p, w in zip(d.paths, d.weights)]
    return out


def test_loop_both_pushes_twice_same_slots_then_the_weights():
    """Hand-worked on the house, A-B cut, reoptimised: A's entry to C gets the failed graph's
    paths [C] (A-D-C there) and [B, C] (A-E-B-C), both weight 1; neither avoids A-B on the
    routes the routers use until the IGP re-converges (A->C is ECMP over B and D, A->B the cut
    itself), so each is replaced by its route on the failed graph pinned to route alike
    before the IGP: [D, C] (A->C would still take B) and [E, C] (A->B is the cut; E->C is E-B-C
    on both). B's entry to A likewise: [A] (B-E-A) as [E, A], [C, A] (B-C-D-A) as [C, D, A]
    (B->D and C->A are ECMP over the cut). Every path is pinned, nothing is held back: the
    event's push has the LP's every route at its weight, and the settle step once the IGP has
    re-converged finds nothing to change (until 2026-11-27 the event's push had one path per
    entry, [D, C] and [E, A], and the settle push added the others behind them). D's entry
    never crossed A-B and is never pushed."""
    ctl, fake, base = _controller()
    plan = ctl.state.plan
    igp = FakeIgp()
    stop = threading.Event()
    src = ScriptedSource([[ev("down", 0.0)], [], [], []], {2: lambda: setattr(igp, "done", 1.0)},
                         stop)
    loop = Loop([src], ctl, phases=Phases("both", igp.settled), poll=0.0, busy_poll=0.0)
    out: list = []
    loop.run(stop, lambda r: out.append((src.i, r)))
    assert [(i, r["events"][0]["kind"], r["pushed"]) for i, r in out] == [
        (1, "down", ["A", "B"]), (3, "igp re-converged", [])]
    assert loop.handled == 1 and loop.events == [ev("down", 0.0)]
    assert igp.asked and max(igp.asked) == 0.0  # asked about the event's time
    assert len(fake.pushed) == 2
    first = dict(fake.pushed)
    assert _slots(first["A"], plan)["C"] == [(["D", "C"], 1.0), (["E", "C"], 1.0)]
    assert _slots(first["B"], plan)["A"] == [(["E", "A"], 1.0), (["C", "D", "A"], 1.0)]
    assert ctl.state.hold_unsafe is False  # a step's hold does not leak into the state
    from tpcstudy.control.run import format_record
    assert " down A-B (test:0.0): links down A-B; detect " in format_record(out[0][1])
    assert " igp re-converged, the held paths back: links down A-B; " in format_record(out[1][1])
    ctl.close()


@pytest.mark.parametrize("at, when", [("event", 1), ("igp", 3)])
def test_loop_event_and_igp_push_once_with_every_weight(at, when):
    """event: pushed at the poll that read the event; igp: at the poll after the IGP has
    re-converged (it does before poll 2); both once, with every weight."""
    ctl, fake, base = _controller()
    igp = FakeIgp()
    stop = threading.Event()
    src = ScriptedSource([[ev("down", 0.0)], [], [], []], {2: lambda: setattr(igp, "done", 1.0)},
                         stop)
    loop = Loop([src], ctl, phases=Phases(at, igp.settled), poll=0.0, busy_poll=0.0)
    out: list = []
    loop.run(stop, lambda r: out.append((src.i, r["events"][0]["kind"])))
    assert out == [(when, "down")]
    assert _slots(dict(fake.pushed)["A"], ctl.state.plan)["C"] == [
        (["D", "C"], 1.0), (["E", "C"], 1.0)]  # pinned (test_loop_both_pushes_twice_...)
    ctl.close()


def test_loop_without_a_controller_only_reads():
    stop = threading.Event()
    src = ScriptedSource([[ev("down", 0.0)], [ev("up", 1.0)]], {}, stop)
    loop = Loop([src])
    loop.run(stop)
    assert [e.kind for e in loop.events] == ["down", "up"] and loop.records == []


def test_loop_up_again_restores_the_intact_records():
    ctl, fake, base = _controller()
    stop = threading.Event()
    src = ScriptedSource([[ev("down", 0.0)], [ev("up", 0.1)]], {}, stop)
    Loop([src], ctl, phases=Phases("event", None)).run(stop)
    assert ctl.state.records["A"] == host_records(base, "A", VARIANT)
    ctl.close()


def test_control_cli_events_on_stdin_both_then_settles(zoo_installed, tmp_path):
    """``tpcstudy control --events - --push command --controller-at both``: no emulated IGP, so
    the real one is taken to re-converge --igp-delay after the event: the held table at once, then
    the settle step (a push of the held paths where any were held), both logged; the end of the
    events waits for the second. ``--controller-at igp``: one push, after the delay."""
    import subprocess

    script = tmp_path / "push.py"
    script.write_text("import json, sys, time\n"
                      "print(json.dumps({'swap_ms': 0.1, 'generation': 1, 'at': time.monotonic(),"
                      " 'host': sys.argv[1]}))\n")
    base = [sys.executable, "-m", "tpcstudy", "control", "--topo", "zoo/Abilene", "--events",
            "-", "--igp-delay", "0.3", "--json"]
    cmd = ["--push", "command", "--", sys.executable, str(script), "{host}", "{table}"]
    env = dict(os.environ, PYTHONSAFEPATH="1")
    p = subprocess.run(base + ["--controller-at", "both"] + cmd,
                       input="down Chicago Indianapolis\n", capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    docs = [json.loads(x) for x in p.stdout.splitlines()]
    assert [d["events"][0]["kind"] for d in docs] == ["down", "igp re-converged"]
    assert docs[0]["pushed"] and not docs[0]["failed"]
    # every path of the affected entries over the cut could be pinned (transition_safe): the
    # first push holds nothing back, the settle step finds nothing left to push
    assert set(docs[1]["pushed"]) <= set(docs[0]["pushed"])
    assert "controller at both" in p.stderr
    p = subprocess.run(base + ["--controller-at", "igp"] + cmd,
                       input="down Chicago Indianapolis\n", capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    docs = [json.loads(x) for x in p.stdout.splitlines()]
    assert [d["events"][0]["kind"] for d in docs] == ["down"]
    assert docs[0]["detect_ms"] >= 300.0  # held until the IGP's assumed re-convergence
