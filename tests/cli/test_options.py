"""tpcstudy.cli.options: the list parsers of the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpcstudy.cli.options import parse_k_list, parse_list
from tpcstudy.errors import UsageError


def test_parse_k_list() -> None:
    assert parse_k_list("1-6") == (1, 2, 3, 4, 5, 6)
    assert parse_k_list("1,2,4") == (1, 2, 4)
    assert parse_k_list("4,1-2, 2") == (1, 2, 4)
    for bad in ("0-3", "a", "3-1", "", "1,-2"):
        with pytest.raises(UsageError):
            parse_k_list(bad)


def test_parse_list() -> None:
    assert parse_list("1, 5,10", float, "--heavy") == [1.0, 5.0, 10.0]
    with pytest.raises(UsageError, match="--heavy: 'x' is not a float"):
        parse_list("1,x", float, "--heavy")
    with pytest.raises(UsageError, match="empty list"):
        parse_list(" , ", str, "--models")


def test_one_error_prefix_and_defaults_in_help(capsys: pytest.CaptureFixture) -> None:
    from tpcstudy.cli import build_parser, main

    # a bad argument reads like every other error: "tpcstudy: error:", naming the verb
    with pytest.raises(SystemExit) as ex:
        main(["export", "--topo", "zoo/Abilene", "--link-mbps", "-5", "--out", "x"])
    assert ex.value.code == 2
    err = capsys.readouterr().err
    assert "tpcstudy: error: export: argument --link-mbps: '-5': must be >= 0" in err
    assert "link_mbps" not in err
    with pytest.raises(SystemExit):
        main(["emulate", "policies", "--repeat", "x"])
    assert "tpcstudy: error: emulate policies: argument --repeat" in capsys.readouterr().err
    # every option with a default says it in --help (here: one that did not before)
    sub = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    text = " ".join(sub["maxflow"].format_help().split())
    assert "segment limits for sr, e.g. 4 or 2,3,4,6 or 1-6 (default: 4)" in text  # added
    assert "(default: ecmp" not in text  # --models names its default itself: not twice


def test_a_renamed_option_keeps_its_old_spelling(tmp_path, capsys: pytest.CaptureFixture) -> None:
    from tpcstudy.cli import build_parser

    p = build_parser()
    new = p.parse_args(["export", "--topo", "t.gml", "--out", "o", "--pairs-file", "p.csv"])
    old = p.parse_args(["export", "--topo", "t.gml", "--out", "o", "--pairs", "p.csv"])
    assert new.pairs == old.pairs == "p.csv"
    assert "--pairs is deprecated, use --pairs-file" in capsys.readouterr().err
    assert "--pairs " not in p._subparsers._group_actions[0].choices["export"].format_help()  # type: ignore[union-attr]


def test_the_committed_option_table_is_the_parsers(tmp_path):
    """docs/cli-flags.md is generated from the parsers (scripts/cli_flags.py); a help text
    changed without regenerating it is caught here (it once still said 90 % for the retry)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "flags.md"
    subprocess.run([sys.executable, str(root / "scripts" / "cli_flags.py"), "--out", str(out)],
                   check=True, capture_output=True)
    assert out.read_text() == (root / "docs" / "cli-flags.md").read_text(), \
        "regenerate: python scripts/cli_flags.py --out docs/cli-flags.md"
