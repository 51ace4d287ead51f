"""The data sets tpcstudy installs on the user's machine: the Internet Topology Zoo and REPETITA.

Neither is shipped with tpcstudy. ``tpcstudy data fetch zoo|repetita`` (or the first ``--topo
zoo`` / ``--topo repetita/...``) installs one from its pinned public source or from a mirror.
Every file is checked against the manifest kept in the project (``data/topologyzoo/SHA256SUMS``,
``data/repetita/SHA256SUMS.*``), and a set is installed whole or not at all: the files are
written into a staging folder beside the target, which is then renamed into place (a previous
good install stays until the new one is complete).

- **Topology Zoo**: the 261 canonical GML files, from the Zoo's long-term store at a pinned
  revision (:data:`ZOO_URL`, one ``gml.tar.gz``), or a mirror: a folder of ``NAME.gml`` files
  or ``gml.tar.gz``, an archive, or an http(s) folder URL.
- **REPETITA**: the files of ``data/2016TopologyZooUCL_inverseCapacity`` (``NAME.graph`` and
  ``NAME.0000.demands``) and ``data/2016TopologyZooUCL_unary`` (``NAME.graph``) of the public
  repository svissicchio/Repetita at a pinned commit (:data:`REPETITA_COMMIT`), one
  raw.githubusercontent.com URL per file, or a mirror with the same layout (a local folder or
  an http(s) folder URL).

Environment: ``TPCSTUDY_DATA`` (where data lands; default ``~/.cache/tpcstudy``),
``TPCSTUDY_ZOO_MIRROR`` and ``TPCSTUDY_REPETITA_MIRROR`` (a mirror for every command),
``TPCSTUDY_ZOO_URL`` (another Zoo archive URL).
"""

from __future__ import annotations

import difflib
import hashlib
import io
import os
import shutil
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Type

from ..errors import DataError, RepetitaDataError, UsageError, ZooDataError

__all__ = ["Dataset", "ZOO", "REPETITA", "DATASETS", "data_dir", "ZOO_URL", "ZOO_REVISION",
           "ZOO_ARCHIVE_SHA256", "REPETITA_COMMIT", "REPETITA_URL", "REPETITA_SUBSETS"]

_MARKER = ".tpcstudy-complete"
_TIMEOUT = 60.0
#: Parallel downloads of a per-file source (REPETITA: 780 small files).
_DOWNLOAD_THREADS = 8


def data_dir() -> Path:
    """Where data sets are installed: ``TPCSTUDY_DATA``, else ``$XDG_CACHE_HOME/tpcstudy``,
    else ``~/.cache/tpcstudy``."""
    env = os.environ.get("TPCSTUDY_DATA")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache).expanduser() if cache else Path.home() / ".cache") / "tpcstudy"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://", "file://"))


def _pick(wanted: str, names: Sequence[str], spec: str, what: str, prefix: str) -> str:
    """``wanted`` among ``names`` (exact, else case-insensitive), or a UsageError with the
    closest names as hints."""
    if wanted in names:
        return wanted
    lower = {n.lower(): n for n in names}
    if wanted.lower() in lower:
        return lower[wanted.lower()]
    close = difflib.get_close_matches(wanted, list(names), n=3)
    hint = f"; did you mean {', '.join(prefix + c for c in close)}?" if close else ""
    raise UsageError(f"{spec!r}: {what} has no topology {wanted!r}{hint}")


class Dataset:
    """A data set installed under :func:`data_dir`, checked against its manifest.

    Subclasses say where the files come from (:meth:`default_source`, :meth:`collect`) and
    which topologies a spec names (:meth:`resolve`); fetching, checking and installing are
    shared.
    """

    #: Name in ``--topo`` specs and ``tpcstudy data fetch NAME``.
    name = ""
    #: Human name for messages.
    title = ""
    #: Folder under :func:`data_dir` and under the project's ``data/`` (the manifests).
    folder_name = ""
    #: ``(manifest file in data/<folder_name>/, sub-folder its names live in)``.
    manifests: Tuple[Tuple[str, str], ...] = ()
    #: Environment variable naming a mirror for every command.
    mirror_env = ""
    error: Type[DataError] = DataError
    how_to_get = ""
    #: How to cite the data set.
    citation = ""

    # -- manifest ----------------------------------------------------------------------
    def _manifest_path(self, file: str) -> Path:
        pkg = Path(__file__).resolve().parents[1]
        for cand in (pkg / "data" / self.folder_name / file,  # installed wheel
                     pkg.parents[1] / "data" / self.folder_name / file):  # checkout (src/)
            if cand.is_file():
                return cand
        raise self.error(f"the {self.title} manifest (data/{self.folder_name}/{file}) is missing "
                         "from the installation; reinstall tpcstudy")

    def manifest(self) -> Dict[str, str]:
        """Relative file path -> SHA256 of every file of the set, in path order."""
        out: Dict[str, str] = {}
        for file, sub in self.manifests:
            for line in self._manifest_path(file).read_text(encoding="utf-8").splitlines():
                if line.strip():
                    digest, name = line.split(None, 1)
                    rel = name.strip().lstrip("*")
                    out[f"{sub}/{rel}" if sub else rel] = digest
        return dict(sorted(out.items()))

    # -- where it lives ----------------------------------------------------------------
    @property
    def folder(self) -> Path:
        """Where the installed files live (they may not be there yet)."""
        return data_dir() / self.folder_name

    def installed(self) -> bool:
        """``True`` when a complete, verified set is installed."""
        return (self.folder / _MARKER).is_file()

    # -- fetching ----------------------------------------------------------------------
    def default_source(self) -> str:
        """The mirror from the environment, else the pinned public source."""
        raise NotImplementedError

    def _download(self, url: str) -> bytes:
        import urllib.error  # ~30 ms to import: only a download needs it
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=_TIMEOUT) as resp:  # noqa: S310 (http/https only)
                data: bytes = resp.read()
                return data
        except urllib.error.HTTPError as exc:
            raise self.error(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise self.error(f"cannot download {url}: {reason}\n{self.how_to_get}") from None

    def _files_from(self, base: str, names: Sequence[str]) -> Dict[str, bytes]:
        """Each of ``names`` below a folder or an http(s) folder URL (absent ones left out of a
        folder; an absent URL is an error)."""
        if _is_url(base):
            root = base if base.endswith("/") else base + "/"
            with ThreadPoolExecutor(_DOWNLOAD_THREADS) as pool:
                return dict(zip(names, pool.map(lambda n: self._download(root + n), names)))
        path = Path(base).expanduser()
        if not path.is_dir():
            raise self.error(f"mirror {path} is not a folder\n{self.how_to_get}")
        return {n: (path / n).read_bytes() for n in names if (path / n).is_file()}

    def collect(self, source: str, names: Sequence[str]) -> Dict[str, bytes]:
        """The files of the set from ``source`` (may miss some; :meth:`fetch` checks)."""
        return self._files_from(source, names)

    def fetch(self, source: Optional[str] = None, *, force: bool = False,
              quiet: bool = True) -> Path:
        """Install the set into :attr:`folder` and return that folder.

        Parameters
        ----------
        source
            A mirror (local folder or http(s) folder URL; the Zoo also takes archives).
            Default: :meth:`default_source`.
        force
            Re-install even when a verified set is already installed.
        quiet
            Do not print what was installed.

        Raises
        ------
        DataError
            (:class:`~tpcstudy.errors.ZooDataError` or
            :class:`~tpcstudy.errors.RepetitaDataError`) a file missing, corrupted or not
            downloadable; nothing is installed then.
        """
        target = self.folder
        if self.installed() and not force:
            return target
        src = source or self.default_source()
        want = self.manifest()
        files = self.collect(src, list(want))
        missing = [n for n in want if n not in files]
        if missing:
            raise self.error(f"{src}: {len(missing)} of {len(want)} {self.title} files missing "
                             f"(first: {', '.join(missing[:5])}); nothing installed\n"
                             f"{self.how_to_get}")
        for name, digest in want.items():
            got = _sha256(files[name])
            if got != digest:
                raise self.error(f"{src}: {name} has SHA256 {got}, the manifest says {digest} "
                                 "(corrupted or a different release); nothing installed")
        self._install(target, {n: files[n] for n in want}, src)
        if not quiet:
            print(f"installed {len(want)} {self.title} files from {src} into {target}")
        return target

    @staticmethod
    def _install(target: Path, files: Dict[str, bytes], src: str) -> None:
        """Write ``files`` into a staging folder beside ``target``, then rename it into place."""
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            for name, data in files.items():
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp / name).write_bytes(data)
            (tmp / _MARKER).write_text(f"source {src}\nfiles {len(files)}\n", encoding="utf-8")
            old = None
            if target.exists():
                old = target.with_name(f".{target.name}-old-{os.getpid()}")
                os.replace(target, old)
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def ensure_installed(self) -> Path:
        """The installed folder, fetching the set first if needed (mirror or network), with a
        line on standard error saying so (standard output stays the command's own)."""
        if self.installed():
            return self.folder
        target = self.fetch()
        print(f"tpcstudy: {self.title} installed on first use into {target} "
              f"({len(self.manifest())} files, checksums verified; cite: {self.citation})",
              file=sys.stderr)
        return target

    # -- specs -------------------------------------------------------------------------
    def topologies(self) -> List[str]:
        """``--topo`` names of every topology in the set (e.g. ``zoo/Abilene``)."""
        raise NotImplementedError

    def resolve(self, rest: str) -> List[Path]:
        """The installed files named by ``NAME/rest`` (fetching the set on first use)."""
        raise NotImplementedError


# ----------------------------------------------------------------------------- Topology Zoo
#: The Zoo's long-term data store (Matthew Roughan's repository), pinned revision.
ZOO_REVISION = "a725bbc4763bf1d0eaea64089ba00c2fe9427fe3"
ZOO_URL = f"https://github.com/mroughan/InternetTopologyZoo/raw/{ZOO_REVISION}/gml.tar.gz"
ZOO_ARCHIVE_SHA256 = "ccdb26338f4e118ef291e83adea6c75b839700b065d5e69ec13c929c4e1f2f71"
ZOO_CITATION = ("S. Knight, H. X. Nguyen, N. Falkner, R. Bowden and M. Roughan, \"The Internet "
                "Topology Zoo\", IEEE JSAC 29(9):1765-1775, 2011. doi:10.1109/JSAC.2011.111002")


class _Zoo(Dataset):
    name = "zoo"
    title = "Topology Zoo"
    folder_name = "topologyzoo"
    manifests = (("SHA256SUMS", ""),)
    mirror_env = "TPCSTUDY_ZOO_MIRROR"
    error = ZooDataError
    citation = ZOO_CITATION
    how_to_get = (
        "To get the Topology Zoo files, either\n"
        "  - run `tpcstudy data fetch zoo` on a machine with internet access (downloads\n"
        f"    {ZOO_URL}),\n"
        "  - or download that archive (or the `gml/` folder of github.com/mroughan/InternetTopologyZoo)\n"
        "    yourself and run `tpcstudy data fetch zoo --mirror DIR` (a folder holding NAME.gml\n"
        "    files or gml.tar.gz), or set TPCSTUDY_ZOO_MIRROR=DIR for every command.")

    def default_source(self) -> str:
        return (os.environ.get(self.mirror_env) or os.environ.get("TPCSTUDY_ZOO_URL")
                or ZOO_URL)

    def _members_of_archive(self, data: bytes, where: str) -> Dict[str, bytes]:
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                out = {}
                for member in tar.getmembers():
                    if member.isfile() and member.name.endswith(".gml"):
                        f = tar.extractfile(member)
                        if f is not None:
                            out[Path(member.name).name] = f.read()
                return out
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise self.error(f"{where} is not a readable tar.gz archive: {exc}") from None

    def collect(self, source: str, names: Sequence[str]) -> Dict[str, bytes]:
        """From an archive URL, an http(s) folder URL, a local archive, or a local folder of
        ``NAME.gml`` files (or holding ``gml.tar.gz``)."""
        if _is_url(source) and source.endswith((".tar.gz", ".tgz", ".tar")):
            data = self._download(source)
            if source == ZOO_URL and _sha256(data) != ZOO_ARCHIVE_SHA256:
                raise self.error(f"{source}: archive checksum {_sha256(data)} differs from the "
                                 f"pinned {ZOO_ARCHIVE_SHA256}; nothing installed")
            return self._members_of_archive(data, source)
        path = Path(source).expanduser()
        if not _is_url(source) and path.is_file():
            return self._members_of_archive(path.read_bytes(), str(path))
        if not _is_url(source) and path.is_dir() and not any((path / n).is_file() for n in names):
            for archive in ("gml.tar.gz", "gml.tgz"):
                if (path / archive).is_file():
                    return self._members_of_archive((path / archive).read_bytes(),
                                                    str(path / archive))
        return self._files_from(source, names)

    def topologies(self) -> List[str]:
        return [f"zoo/{n[:-4]}" for n in self.manifest()]

    def resolve(self, rest: str) -> List[Path]:
        """``zoo`` (all 261, name order) or ``zoo/NAME`` (one; ``.gml`` optional)."""
        names = list(self.manifest())
        if not rest:
            return [self.ensure_installed() / n for n in names]
        wanted = rest if rest.endswith(".gml") else rest + ".gml"
        stems = [n[:-4] for n in names]
        stem = _pick(wanted[:-4], stems, f"zoo/{rest}", "the Topology Zoo", "zoo/")
        return [self.ensure_installed() / f"{stem}.gml"]


# ----------------------------------------------------------------------------- REPETITA
#: svissicchio/Repetita, pinned commit.
REPETITA_COMMIT = "60e679c2f34d9b65b7f256ff6f6963938fa040f9"
#: Base URL of the repository's ``data/`` folder at that commit (one file per request).
REPETITA_URL = f"https://raw.githubusercontent.com/svissicchio/Repetita/{REPETITA_COMMIT}/data/"
#: ``--topo repetita/<subset>`` -> the REPETITA folder.
REPETITA_SUBSETS = {"inverse-capacity": "2016TopologyZooUCL_inverseCapacity",
                    "unary": "2016TopologyZooUCL_unary"}
REPETITA_CITATION = ("S. Gay, P. Schaus, S. Vissicchio, REPETITA: Repeatable Experiments for "
                     "Performance Evaluation of Traffic-Engineering Algorithms, "
                     "arXiv:1710.08665, 2017")


class _Repetita(Dataset):
    name = "repetita"
    title = "REPETITA"
    folder_name = "repetita"
    manifests = (("SHA256SUMS.inverseCapacity", REPETITA_SUBSETS["inverse-capacity"]),
                 ("SHA256SUMS.unary", REPETITA_SUBSETS["unary"]))
    mirror_env = "TPCSTUDY_REPETITA_MIRROR"
    error = RepetitaDataError
    citation = REPETITA_CITATION
    how_to_get = (
        "To get the REPETITA files, either\n"
        "  - run `tpcstudy data fetch repetita` on a machine with internet access (downloads\n"
        f"    each file from {REPETITA_URL}),\n"
        "  - or copy the folders data/2016TopologyZooUCL_inverseCapacity and\n"
        "    data/2016TopologyZooUCL_unary of github.com/svissicchio/Repetita (that commit) into\n"
        "    one folder and run `tpcstudy data fetch repetita --mirror DIR`, or set\n"
        "    TPCSTUDY_REPETITA_MIRROR=DIR for every command.")

    def default_source(self) -> str:
        return os.environ.get(self.mirror_env) or REPETITA_URL

    def topologies(self) -> List[str]:
        out = []
        for alias, sub in REPETITA_SUBSETS.items():
            out += [f"repetita/{alias}/{Path(n).stem}" for n in self.manifest()
                    if n.startswith(sub + "/") and n.endswith(".graph")]
        return out

    def resolve(self, rest: str) -> List[Path]:
        """``repetita/<subset>`` (every ``.graph`` of the subset, name order) or
        ``repetita/<subset>/NAME``; subsets ``inverse-capacity`` and ``unary`` (or REPETITA's
        folder names)."""
        subset, _, name = rest.partition("/")
        folders = {**REPETITA_SUBSETS, **{v: v for v in REPETITA_SUBSETS.values()}}
        if subset not in folders:
            raise UsageError(f"'repetita/{rest}': name a subset, "
                             + " or ".join(f"repetita/{a}" for a in REPETITA_SUBSETS)
                             + " (optionally /NAME)")
        sub = folders[subset]
        graphs = [n[len(sub) + 1:-len(".graph")] for n in self.manifest()
                  if n.startswith(sub + "/") and n.endswith(".graph")]
        if not name.strip("/"):
            return [self.ensure_installed() / sub / f"{g}.graph" for g in graphs]
        wanted = name.strip("/")
        wanted = wanted[:-len(".graph")] if wanted.endswith(".graph") else wanted
        stem = _pick(wanted, graphs, f"repetita/{rest}", f"REPETITA {subset}",
                     f"repetita/{subset}/")
        return [self.ensure_installed() / sub / f"{stem}.graph"]


ZOO = _Zoo()
REPETITA = _Repetita()
#: Every data set by its ``--topo`` / ``data fetch`` name.
DATASETS: Dict[str, Dataset] = {d.name: d for d in (ZOO, REPETITA)}

# SNDlib (through the optional topohub package) is a Dataset of its own module
from .sndlib import SNDLIB  # noqa: E402

DATASETS[SNDLIB.name] = SNDLIB
