"""What a ``--topo`` value names: a file, a folder, a glob, or an installed data set.

- a file: ``.gml`` (Topology Zoo), ``.graphml``, ``.graph`` (REPETITA);
- a folder (not recursive) or a glob: its topology files, sorted by name;
- ``zoo`` (the 261 Topology Zoo files) or ``zoo/NAME``;
- ``repetita/inverse-capacity`` or ``repetita/unary`` (REPETITA's 260 Zoo instances with
  inverse-capacity or unit IGP weights), or ``repetita/inverse-capacity/NAME``.

Data sets are installed on first use (see :mod:`tpcstudy.io.datasets`). A local file or folder
of the same name as a data set wins.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ..errors import UsageError
from .bounded import check_input_file
from .datasets import DATASETS, Dataset

__all__ = ["TOPOLOGY_SUFFIXES", "Spec", "data_spec", "topology_files", "spec_text"]

TOPOLOGY_SUFFIXES = (".gml", ".graphml", ".graph")

#: A ``--topo`` value, or a list of them (a notebook studying a few named topologies).
Spec = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]


def data_spec(text: str) -> Optional[Tuple[Dataset, str]]:
    """``(data set, rest)`` when ``text`` names an installed data set (``zoo/Abilene`` ->
    (ZOO, "Abilene")) and no local file or folder of that name exists, else ``None``."""
    head, _, rest = text.partition("/")
    dataset = DATASETS.get(head)
    if dataset is None or Path(text).exists():
        return None
    return dataset, rest.strip("/")


def _is_topology_file(p: Path) -> bool:
    return p.suffix.lower() in TOPOLOGY_SUFFIXES and p.is_file()


def _files_of(text: str) -> List[Path]:
    named = data_spec(text)
    if named is not None:
        return named[0].resolve(named[1])
    p = Path(text)
    if p.is_dir():
        files = sorted(q for q in p.iterdir() if _is_topology_file(q))
        if not files:
            raise UsageError(f"folder {p} holds no topology file ({', '.join(TOPOLOGY_SUFFIXES)})")
        return files
    if p.is_file():
        return [p]
    if p.exists():  # a FIFO, a device, a socket: what it is, not "no such file"
        check_input_file(p, what="topology")
    if any(c in text for c in "*?["):
        files = sorted(q for q in map(Path, glob.glob(text)) if _is_topology_file(q))
        if not files:
            raise UsageError(f"pattern {text!r} matches no topology file")
        return files
    names = ", ".join(f"'{d.name}'" for d in DATASETS.values())
    raise UsageError(f"--topo {text!r}: no such file or folder (or name a data set: {names}; "
                     "e.g. zoo/Abilene, repetita/inverse-capacity)")


def spec_text(spec: Spec) -> str:
    """A ``--topo`` value (or list of them) as one string, e.g. for meta.json."""
    if isinstance(spec, (str, os.PathLike)):
        return os.fspath(spec)
    return ",".join(os.fspath(one) for one in spec)


def topology_files(spec: Spec) -> List[Path]:
    """The files a ``--topo`` value (or a list of values) names, in order, each file once.

    Folders are read non-recursively; within a folder, glob or data set, files are sorted by
    name.
    """
    if isinstance(spec, (str, os.PathLike)):
        return _utf8_names(_files_of(os.fspath(spec)))
    out: List[Path] = []
    for one in spec:
        out.extend(_files_of(os.fspath(one)))
    if not out:
        raise UsageError("--topo: an empty list of topologies")
    return _utf8_names(list(dict.fromkeys(out)))


def _utf8_names(files: List[Path]) -> List[Path]:
    """``files``, refusing names that are not UTF-8: a topology's name is its file's stem, and
    results are UTF-8 text."""
    for p in files:
        try:
            p.name.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(p.name).decode("utf-8", "backslashreplace")
            raise UsageError(f"{p.parent}: the file name '{shown}' is not UTF-8; rename it "
                             "(a topology is named after its file)") from None
    return files
