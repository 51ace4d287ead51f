"""Every file tpcstudy reads goes through one bounded reader (:mod:`tpcstudy.io.bounded`):
regular files only, a size limit, at most ~80 characters of a line quoted (issue 44, items 2-4).

Each special file is refused within a second with flat memory: the reads run in a child process
with its address space capped (1.5 GiB) and a timeout, so that a reader without bounds fails
here instead of eating the machine's memory or hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Tuple

import pytest

from tpcstudy.errors import InputFileError, TopologyFormatError
from tpcstudy.io import read_demands, read_topology

REPETITA_GRAPH = "2016TopologyZooUCL_inverseCapacity/Abilene.graph"
GIB = 1 << 30


def _child(code: str, timeout: float = 20.0) -> Tuple[float, str]:
    """Run ``code`` (which prints its result) in a child with 1.5 GiB of address space: the
    seconds it took to answer (measured inside the child) and what it printed."""
    prog = textwrap.dedent("""
        import resource, sys, time
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
        t0 = time.monotonic()
        try:
            out = run()
        except BaseException as exc:
            out = f"{type(exc).__name__}: {exc}"
        print(f"{time.monotonic() - t0:.3f}")
        print(str(out)[:2000])
    """)
    setup = textwrap.dedent(code)
    r = subprocess.run([sys.executable, "-c", setup + prog], capture_output=True, text=True,
                       timeout=timeout)
    lines = r.stdout.splitlines()
    assert len(lines) >= 2, r.stdout + r.stderr
    return float(lines[0]), "\n".join(lines[1:])


@pytest.fixture
def specials(tmp_path: Path) -> dict:
    fifo = tmp_path / "fifo.demands"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.demands"
    zero.symlink_to("/dev/zero")
    big = tmp_path / "big.demands"
    with open(big, "wb") as fh:  # sparse: 1 GiB of NULs, no disk used
        fh.truncate(GIB)
    return {"fifo": fifo, "zero-link": zero, "dev-zero": Path("/dev/zero"), "1 GiB": big}


@pytest.mark.parametrize("kind, expect", [
    ("fifo", "a FIFO (named pipe), not a regular file"),
    ("zero-link", "a character device, not a regular file"),
    ("dev-zero", "a character device, not a regular file"),
    ("1 GiB", "1073741824 bytes, more than the"),
])
@pytest.mark.parametrize("reader", ["read_demands", "read_topology"])
def test_special_files_are_refused_fast_and_flat(specials: dict, kind: str, expect: str,
                                                 reader: str, tmp_path: Path) -> None:
    path = specials[kind]
    if reader == "read_topology" and kind != "dev-zero":  # the same file as a .graph topology
        graph = tmp_path / f"{kind.replace(' ', '')}.graph"
        if not graph.exists():
            os.rename(path, graph) if kind != "zero-link" else graph.symlink_to("/dev/zero")
        path = graph
    secs, out = _child(f"""
        from tpcstudy.io import {reader}
        def run():
            return {reader}({str(path)!r})
    """)
    if reader == "read_topology" and kind == "dev-zero":  # no suffix: refused by its name
        expect = "unknown topology format"
    assert expect in out and "no such file" not in out, out
    assert secs < 1.0, (secs, out)


def test_a_huge_count_is_refused_before_anything_is_allocated(tmp_path: Path) -> None:
    """``DEMANDS 99999999999999`` asked numpy for 1.42 PiB (a MemoryError traceback)."""
    p = tmp_path / "huge.demands"
    p.write_text("DEMANDS 99999999999999\nlabel src dest bw\n0 0 1 5\n")
    secs, out = _child(f"""
        from tpcstudy.io import read_demands
        def run():
            return read_demands({str(p)!r})
    """)
    assert out.startswith("TopologyFormatError: ") and \
        "expected 99999999999999 demand lines, found 1" in out, out
    assert secs < 1.0


def test_error_lines_quote_at_most_80_characters(tmp_path: Path) -> None:
    from tpcstudy.io import clip

    p = tmp_path / "long.demands"
    p.write_text("DEMANDS 1\nlabel src dest bw\n0 0 1 " + "7x" * 500_000 + "\n")
    with pytest.raises(TopologyFormatError) as info:
        read_demands(p)
    msg = str(info.value)
    assert len(msg) < 300 and "(1000000 characters)" in msg and f"{p}:3" in msg
    g = tmp_path / "long.graph"
    g.write_text("NODES 1\nlabel x y\n" + "a" * 100_000 + "\n")
    with pytest.raises(TopologyFormatError) as info:
        read_topology(g)
    assert len(str(info.value)) < 300
    assert clip("x" * 81).endswith("... (81 characters)") and clip("short") == "'short'"


def test_gml_and_graphml_go_through_the_bounded_reader(tmp_path: Path) -> None:
    for suffix in (".gml", ".graphml"):
        fifo = tmp_path / f"t{suffix}"
        os.mkfifo(fifo)
        secs, out = _child(f"""
            from tpcstudy.io import read_topology
            def run():
                return read_topology({str(fifo)!r})
        """)
        assert "a FIFO (named pipe), not a regular file" in out and secs < 1.0, out


def test_a_directed_gml_is_said_so_not_read_as_undirected(tmp_path: Path) -> None:
    p = tmp_path / "d.gml"
    p.write_text('graph [\n  directed 1\n  node [ id 0 label "a" ]\n  node [ id 1 label "b" ]\n'
                 '  edge [ source 0 target 1 ]\n]\n')
    with pytest.raises(TopologyFormatError, match=r"d.gml:2: directed 1: a directed graph, but "
                       r"tpcstudy reads every link as undirected"):
        read_topology(p)
    p.write_text(p.read_text().replace("directed 1", "directed 0"))
    assert read_topology(p).num_links == 1


def test_json_nested_deep_is_one_line(tmp_path: Path) -> None:
    from tpcstudy.io import read_bounded_json

    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputFileError, match="nested more than 64 levels deep"):
        read_bounded_json(p, 1 << 20)
    p.write_text(json.dumps({"a": [1, {"b": "[[[["}]}))
    assert read_bounded_json(p, 1 << 20) == {"a": [1, {"b": "[[[["}]}


def test_read_bounded_refuses_links_unless_told(tmp_path: Path) -> None:
    from tpcstudy.io import read_bounded

    f = tmp_path / "f"
    f.write_bytes(b"abc")
    link = tmp_path / "l"
    link.symlink_to(f)
    with pytest.raises(InputFileError, match="a symbolic link"):
        read_bounded(link, 10)
    assert read_bounded(link, 10, follow=True) == b"abc"
    with pytest.raises(InputFileError, match="more than the 2 bytes"):
        read_bounded(f, 2)
    with pytest.raises(InputFileError, match="a folder, not a regular file"):
        read_bounded(tmp_path, 10)
