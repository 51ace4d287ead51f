"""The core's GML parser (the fast path of ``tpcstudy.io.gml.parse_gml``) against the Python
parser it stands in for: the same nested lists, types and line numbers on every Zoo file and on
hand-written ones; and where it gives up (malformed or unusual text), the Python parser reads
the file, so the result or the error is the Python parser's."""

from __future__ import annotations

import html
import random
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import tpcstudy._core as _core
from tpcstudy import TopologyFormatError
from tpcstudy.io.gml import parse_gml, parse_python

P = Path("t.gml")


def outcome(fn: Any, text: str, collapse: Any = None) -> Tuple[str, str]:
    """``repr`` of what ``fn`` gives (repr tells 1 from 1.0 and -0.0 from 0.0), or its error."""
    try:
        return "ok", repr(fn(text, P, collapse))
    except TopologyFormatError as exc:
        return "error", str(exc)


def test_every_zoo_file_as_the_python_parser_reads_it(zoo_installed: Path) -> None:
    files = sorted(zoo_installed.glob("*.gml"))
    assert len(files) >= 261
    for f in files:
        text = f.read_text(encoding="utf-8")
        tree = _core.parse_gml(text, html.unescape)
        assert tree is not None, f.name  # every Zoo file takes the fast path
        assert repr(tree) == repr(parse_python(text, f)), f.name


def test_hand_worked_file() -> None:
    text = ('# a comment "not a string" [\n'
            'graph [\r\n'
            '  directed 0 version -1.5e3 x +7 y .5 z 1. big 123456789012345678\n'
            '  label "two\nlines &amp; an entity"\tafter 1E-2\n'
            '  node [ id 0 label "a" ]  # trailing\n'
            '  neg -0.0 zero 0 empty [ ]\n'
            ']\n')
    want = [("graph", [
        ("directed", 0, 3), ("version", -1500.0, 3), ("x", 7, 3), ("y", 0.5, 3), ("z", 1.0, 3),
        ("big", 123456789012345678, 3),
        ("label", "two\nlines & an entity", 4), ("after", 0.01, 5),
        ("node", [("id", 0, 6), ("label", "a", 6)], 6),
        ("neg", -0.0, 7), ("zero", 0, 7), ("empty", [], 7)], 2)]
    got = _core.parse_gml(text, html.unescape)
    assert repr(got) == repr(want)
    assert repr(parse_gml(text, P)) == repr(want) == repr(parse_python(text, P))


@pytest.mark.parametrize("text", [
    "a 1.5e",            # the regular expression backtracks to "1." and then fails at "5e"
    "a 12abc",           # ... to "1", then fails
    "a 5.e1x",
    "a ]", "] a 1", "a [ b 1", "a", "a \"open", "1 a", "a b",
    "a \u0663",          # Python's \d: an Arabic-Indic digit (int() reads it: 3)
    "a \u00a0 1",        # a no-break space is no GML whitespace
    "a 1234567890123456789",  # 19 digits: Python's int
    "a 1e999", "a 1e-400",     # outside the double range: inf and 0.0 in Python
    "a +", "a -.", "a .", "a \x00",
    "a " + "[ b " * 200 + "[ c 1 " + "]" * 201,  # 201 lists deep: more than the core goes
])
def test_the_core_gives_up_and_python_decides(text: str) -> None:
    assert _core.parse_gml(text, html.unescape) is None
    assert outcome(parse_gml, text) == outcome(parse_python, text)


def test_deep_but_within_bounds_takes_the_fast_path() -> None:
    text = "a " + "[ b " * 199 + "[ c 1 " + "]" * 200  # 200 lists deep
    assert _core.parse_gml(text, html.unescape) is not None
    assert outcome(parse_gml, text) == outcome(parse_python, text)


def test_collapse_sees_the_same_blocks_in_the_same_order() -> None:
    text = ('Creator "x"\ngraph [\n node [ id 0 ]\n node [ id 1 inner [ k 1 ] ]\n edge [ source 0 '
            'target 1 ]\n label "g"\n]\nother [ node [ id 9 ] ]\ngraph [ node [ id 5 ] ]\n')
    for keep in (False, True):
        calls: List[List[Any]] = [[], []]

        def make(log: List[Any], drop: bool) -> Any:
            def collapse(key: str, block: Any, line: int) -> bool:
                log.append((key, repr(block), line))
                return drop and key == "node"
            return collapse

        a = parse_gml(text, P, make(calls[0], not keep))
        b = parse_python(text, P, make(calls[1], not keep))
        assert repr(a) == repr(b)
        assert calls[0] == calls[1] and len(calls[0]) == 4


def test_mutated_files_read_alike() -> None:
    """Random edits of a small valid file (characters inserted, deleted, replaced from the
    grammar's alphabet): the fast path and the Python parser give the same tree or the same
    error, every time."""
    base = ('graph [\n  node [ id 0 label "a &amp; b" Latitude 1.5 ]\n  node [ id 1 ]\n'
            '  edge [ source 0 target 1 LinkSpeedRaw 1e9 ]  # c\n]\n')
    alphabet = ' \n\t[]"#.-+eE_0123456789abAZ&\u00e9'
    rng = random.Random(7)
    fast = 0
    for _ in range(3000):
        t = list(base)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t) + 1)
            op = rng.random()
            if op < 0.4:
                t.insert(i, rng.choice(alphabet))
            elif op < 0.7 and i < len(t):
                del t[i]
            elif i < len(t):
                t[i] = rng.choice(alphabet)
        text = "".join(t)
        fast += _core.parse_gml(text, html.unescape) is not None
        assert outcome(parse_gml, text) == outcome(parse_python, text), text
    assert 300 < fast < 3000  # both paths were taken many times
