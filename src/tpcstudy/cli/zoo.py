"""``tpcstudy zoo fetch|path|list``: the same as ``tpcstudy data ... zoo`` (kept as an alias)."""

from __future__ import annotations

from typing import Any

from .data import add_actions


def register(sub: Any) -> None:
    zoo = sub.add_parser("zoo", help="the Internet Topology Zoo data (= tpcstudy data ... zoo)")
    zsub = zoo.add_subparsers(dest="zoo_command", metavar="ACTION")
    zsub.required = True
    add_actions(zsub, dataset_argument=False)
