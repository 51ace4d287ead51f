"""SNDlib's networks and demand matrices (``--topo sndlib`` / ``sndlib/NAME``), read from the
``topohub`` package (``pip install 'tpcstudy[sndlib]'``), which ships them inside its wheel:
nothing is downloaded.

On first use (or ``tpcstudy data fetch sndlib``) each of topohub's ``sndlib/NAME.json`` files is
checked against the manifest kept in the project (``data/sndlib/SHA256SUMS.topohub-1.5.1``) and
written, once, as REPETITA's two text files in ``$TPCSTUDY_DATA/sndlib/``: ``NAME.graph`` (the
routers with their coordinates; every link in both directions, IGP weight 1, delay from the
great-circle length at 200 km/ms, in microseconds) and ``NAME.0000.demands`` (SNDlib's demand
matrix, its own units), so that ``--demands auto`` finds the matrix beside the topology as for
REPETITA. topohub keeps no link capacity of SNDlib's (its JSON has each link's length and its
own ECMP loads only), so every link gets capacity 1: MLUs are then in demand units per link, and
reductions over ECMP (ratios) are unit-free.

Source and terms: SNDlib (S. Orlowski, R. Wessäly, M. Pióro, A. Tomaszewski, "SNDlib
1.0 - Survivable Network Design Library", Networks 55(3):276-286, 2010,
doi:10.1002/net.20371), converted by topohub (P. Jurkiewicz, SoftwareX 24:101540, 2023; MIT
licence); see data/sndlib/README.md.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..errors import DataError
from .datasets import Dataset, _pick

__all__ = ["SNDLIB", "SNDLIB_CITATION", "TOPOHUB_VERSION", "convert"]

#: The topohub release whose SNDlib files the manifest lists.
TOPOHUB_VERSION = "1.5.1"
SNDLIB_CITATION = ("S. Orlowski, R. Wessäly, M. Pióro and A. Tomaszewski, \"SNDlib 1.0 - "
                   "Survivable Network Design Library\", Networks 55(3):276-286, 2010. "
                   "doi:10.1002/net.20371 (through topohub: P. Jurkiewicz, SoftwareX 24:101540, "
                   "2023)")
#: Light in fibre, km per ms (as tpcstudy.rules).
_KM_PER_MS = 200.0


class SndlibDataError(DataError):
    """topohub missing, or its SNDlib files not those the project checked."""


def convert(doc: Dict[str, Any], name: str) -> Dict[str, bytes]:
    """``{NAME.graph, NAME.0000.demands}`` of one of topohub's node-link documents."""
    nodes = list(doc.get("nodes") or [])
    index = {n["id"]: i for i, n in enumerate(nodes)}
    labels = ["".join(c if c.isalnum() or c in "-._" else "_" for c in str(n.get("name") or i))
              for i, n in enumerate(nodes)]
    g = ["NODES %d" % len(nodes), "label x y"]
    for lab, n in zip(labels, nodes):
        lon, lat = (n.get("pos") or (0.0, 0.0))[:2]
        g.append(f"{lab} {float(lon):.17g} {float(lat):.17g}")
    edges = list(doc.get("edges") or [])
    g += ["", "EDGES %d" % (2 * len(edges)), "label src dest weight bw delay"]
    for k, e in enumerate(edges):
        a, b = index[e["source"]], index[e["target"]]
        delay = int(round(1000.0 * float(e.get("dist") or 0.0) / _KM_PER_MS))
        g.append(f"edge_{2 * k} {a} {b} 1 1 {delay}")
        g.append(f"edge_{2 * k + 1} {b} {a} 1 1 {delay}")
    raw = doc.get("graph", {}).get("demands") or {}
    dem = ast.literal_eval(raw) if isinstance(raw, str) else raw
    pairs = [(index[int(s)], index[int(t)], float(v)) for s, row in dem.items()
             for t, v in row.items() if float(v) > 0 and math.isfinite(float(v))]
    d = ["DEMANDS %d" % len(pairs), "label src dest bw"]
    d += [f"demand_{i} {s} {t} {v:.17g}" for i, (s, t, v) in enumerate(pairs)]  # exact
    return {f"{name}.graph": ("\n".join(g) + "\n").encode("utf-8"),
            f"{name}.0000.demands": ("\n".join(d) + "\n").encode("utf-8")}


class _Sndlib(Dataset):
    name = "sndlib"
    title = "SNDlib"
    folder_name = "sndlib"
    manifests = ((f"SHA256SUMS.topohub-{TOPOHUB_VERSION}", ""),)
    mirror_env = "TPCSTUDY_SNDLIB_MIRROR"
    error = SndlibDataError
    citation = SNDLIB_CITATION
    how_to_get = ("SNDlib's networks come with the topohub package: pip install "
                  f"'tpcstudy[sndlib]' (topohub=={TOPOHUB_VERSION})")

    def _source(self) -> Path:
        try:
            import topohub
        except ImportError:
            raise self.error(f"--topo sndlib needs the topohub package: {self.how_to_get}") \
                from None
        return Path(topohub.__file__).resolve().parent / "data" / "sndlib"

    def default_source(self) -> str:
        return str(self._source())

    def topologies(self) -> List[str]:
        return [f"sndlib/{n[:-len('.json')]}" for n in self.manifest()]

    def fetch(self, source: Optional[str] = None, *, force: bool = False,
              quiet: bool = True) -> Path:
        """Check topohub's files against the manifest, convert and install them (module
        docstring); ``source``: a folder of topohub's ``NAME.json`` (default: the installed
        topohub's)."""
        target = self.folder
        if self.installed() and not force:
            return target
        src = Path(source) if source else self._source()
        want = self.manifest()
        files: Dict[str, bytes] = {}
        for file, digest in want.items():
            p = src / file
            if not p.is_file():
                raise self.error(f"{src}: {file} missing (topohub {TOPOHUB_VERSION} ships it); "
                                 f"nothing installed\n{self.how_to_get}")
            data = p.read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                raise self.error(f"{p}: not the file of topohub {TOPOHUB_VERSION} that tpcstudy "
                                 f"checked (pip install topohub=={TOPOHUB_VERSION}); nothing "
                                 "installed")
            try:
                files.update(convert(json.loads(data.decode("utf-8")), file[:-len(".json")]))
            except (ValueError, KeyError, TypeError, SyntaxError) as exc:
                raise self.error(f"{p}: cannot convert ({exc}); nothing installed") from None
        self._install(target, files, f"topohub {TOPOHUB_VERSION} ({src})")
        if not quiet:
            print(f"installed {len(want)} {self.title} networks from {src} into {target}")
        return target

    def resolve(self, rest: str) -> List[Path]:
        """``sndlib`` (all, name order) or ``sndlib/NAME`` (``abilene``, case-insensitive)."""
        names = [n[:-len(".json")] for n in self.manifest()]
        if not rest.strip("/"):
            return [self.ensure_installed() / f"{n}.graph" for n in names]
        wanted = rest.strip("/")
        wanted = wanted[:-len(".graph")] if wanted.endswith(".graph") else wanted
        stem = _pick(wanted, names, f"sndlib/{rest}", "SNDlib", "sndlib/")
        return [self.ensure_installed() / f"{stem}.graph"]


SNDLIB = _Sndlib()
