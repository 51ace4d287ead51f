"""The installed version of tpcstudy, from the package metadata (pyproject.toml's version)."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("tpcstudy")
except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
