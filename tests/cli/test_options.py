"""tpcstudy.cli.options: the list parsers of the command line."""

from __future__ import annotations

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
