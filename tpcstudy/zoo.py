"""The Internet Topology Zoo: manifest, fetching, local mirrors, ``zoo`` / ``zoo/NAME`` specs.

The 261 canonical GML files are not shipped with tpcstudy. ``tpcstudy zoo fetch`` installs them
on the user's machine from the Zoo's long-term store at a pinned revision (:data:`ZOO_URL`), or
from a mirror (a local folder or an http(s) folder URL holding ``NAME.gml`` files or
``gml.tar.gz``). Every file is checked against the manifest (SHA256, kept in
``data/topologyzoo/SHA256SUMS``) and the set is installed atomically: a bad or missing file fails
with a message naming it and leaves nothing half-installed.

Environment: ``TPCSTUDY_ZOO_MIRROR`` (a mirror for every command), ``TPCSTUDY_DATA`` (where data
lands; default ``~/.cache/tpcstudy``), ``TPCSTUDY_ZOO_URL`` (another archive URL).
"""

from __future__ import annotations

import difflib
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

from .errors import UsageError, ZooDataError

__all__ = ["ZOO_URL", "ZOO_ARCHIVE_SHA256", "manifest", "zoo_dir", "installed", "fetch", "resolve",
           "ensure_installed"]

#: The Zoo's long-term data store (Matthew Roughan's repository), pinned revision.
ZOO_REVISION = "a725bbc4763bf1d0eaea64089ba00c2fe9427fe3"
ZOO_URL = f"https://github.com/mroughan/InternetTopologyZoo/raw/{ZOO_REVISION}/gml.tar.gz"
ZOO_ARCHIVE_SHA256 = "ccdb26338f4e118ef291e83adea6c75b839700b065d5e69ec13c929c4e1f2f71"
ZOO_ARCHIVE_SIZE = 348_613
ZOO_CITATION = ("S. Knight, H. X. Nguyen, N. Falkner, R. Bowden and M. Roughan, \"The Internet "
                "Topology Zoo\", IEEE JSAC 29(9):1765-1775, 2011. doi:10.1109/JSAC.2011.111002")
_MARKER = ".tpcstudy-complete"
_TIMEOUT = 60.0

HOW_TO_GET = (
    "To get the Topology Zoo files, either\n"
    "  - run `tpcstudy zoo fetch` on a machine with internet access (downloads\n"
    f"    {ZOO_URL}),\n"
    "  - or download that archive (or the `gml/` folder of github.com/mroughan/InternetTopologyZoo)\n"
    "    yourself and run `tpcstudy zoo fetch --mirror DIR` (a folder holding NAME.gml files or\n"
    "    gml.tar.gz), or set TPCSTUDY_ZOO_MIRROR=DIR for every command.")


def _manifest_path() -> Path:
    here = Path(__file__).resolve().parent
    for cand in (here / "data" / "topologyzoo" / "SHA256SUMS",
                 here.parent / "data" / "topologyzoo" / "SHA256SUMS"):
        if cand.is_file():
            return cand
    raise ZooDataError("the Topology Zoo manifest (data/topologyzoo/SHA256SUMS) is missing from "
                       "the installation; reinstall tpcstudy")


def manifest() -> Dict[str, str]:
    """File name -> SHA256 of the 261 canonical Zoo GML files, in name order."""
    out: Dict[str, str] = {}
    for line in _manifest_path().read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split(None, 1)
            out[name.strip().lstrip("*")] = digest
    return dict(sorted(out.items()))


def data_dir() -> Path:
    env = os.environ.get("TPCSTUDY_DATA")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache).expanduser() if cache else Path.home() / ".cache") / "tpcstudy"


def zoo_dir() -> Path:
    """Where the installed Zoo files live (they may not be there yet)."""
    return data_dir() / "topologyzoo"


def installed() -> bool:
    return (zoo_dir() / _MARKER).is_file()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://", "file://"))


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT) as resp:  # noqa: S310 (http/https only)
            return resp.read()
    except urllib.error.HTTPError as exc:
        raise ZooDataError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ZooDataError(f"cannot download {url}: {reason}\n{HOW_TO_GET}") from None


def _members_of_archive(data: bytes, where: str) -> Dict[str, bytes]:
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
        raise ZooDataError(f"{where} is not a readable tar.gz archive: {exc}") from None


def _collect(source: str, names: List[str]) -> Dict[str, bytes]:
    """The Zoo files from an archive URL, an http(s) folder URL, a local folder or archive."""
    if _is_url(source):
        if source.endswith((".tar.gz", ".tgz", ".tar")):
            data = _download(source)
            if source == ZOO_URL and _sha256(data) != ZOO_ARCHIVE_SHA256:
                raise ZooDataError(f"{source}: archive checksum {_sha256(data)} differs from the pinned "
                                   f"{ZOO_ARCHIVE_SHA256}; nothing installed")
            return _members_of_archive(data, source)
        base = source if source.endswith("/") else source + "/"
        return {name: _download(base + name) for name in names}
    path = Path(source).expanduser()
    if path.is_file():
        return _members_of_archive(path.read_bytes(), str(path))
    if not path.is_dir():
        raise ZooDataError(f"mirror {path} is neither a folder nor an archive\n{HOW_TO_GET}")
    if not any((path / n).is_file() for n in names):
        for archive in ("gml.tar.gz", "gml.tgz"):
            if (path / archive).is_file():
                return _members_of_archive((path / archive).read_bytes(), str(path / archive))
    return {n: (path / n).read_bytes() for n in names if (path / n).is_file()}


def fetch(source: Optional[str] = None, *, force: bool = False, quiet: bool = True) -> Path:
    """Install the 261 Zoo files into :func:`zoo_dir` and return that folder.

    Parameters
    ----------
    source
        A mirror (local folder, local archive, http(s) folder URL or archive URL). Default:
        ``TPCSTUDY_ZOO_MIRROR`` if set, else ``TPCSTUDY_ZOO_URL``, else :data:`ZOO_URL`.
    force
        Re-install even when a verified set is already installed.
    """
    target = zoo_dir()
    if installed() and not force:
        return target
    src = source or os.environ.get("TPCSTUDY_ZOO_MIRROR") or os.environ.get("TPCSTUDY_ZOO_URL") or ZOO_URL
    want = manifest()
    files = _collect(src, list(want))
    missing = [n for n in want if n not in files]
    if missing:
        raise ZooDataError(f"{src}: {len(missing)} of {len(want)} Zoo files missing (first: "
                           f"{', '.join(missing[:5])}); nothing installed\n{HOW_TO_GET}")
    for name, digest in want.items():
        got = _sha256(files[name])
        if got != digest:
            raise ZooDataError(f"{src}: {name} has SHA256 {got}, the manifest says {digest} "
                               "(corrupted or a different release); nothing installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".topologyzoo-", dir=target.parent))
    try:
        for name in want:
            (tmp / name).write_bytes(files[name])
        (tmp / _MARKER).write_text(f"source {src}\nfiles {len(want)}\n", encoding="utf-8")
        old = None
        if target.exists():
            old = target.with_name(f".topologyzoo-old-{os.getpid()}")
            os.replace(target, old)
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if not quiet:
        print(f"installed {len(want)} Topology Zoo files from {src} into {target}")
    return target


def ensure_installed() -> Path:
    """The installed Zoo folder, fetching it first if needed (mirror or network)."""
    if installed():
        return zoo_dir()
    return fetch()


def resolve(spec: str) -> List[Path]:
    """Paths named by ``zoo`` (all 261, name order) or ``zoo/NAME`` (one; ``.gml`` optional)."""
    names = list(manifest())
    rest = spec[len("zoo"):].strip("/")
    if rest in ("",):
        return [ensure_installed() / n for n in names]
    wanted = rest if rest.endswith(".gml") else rest + ".gml"
    if wanted not in names:
        lower = {n.lower(): n for n in names}
        if wanted.lower() in lower:
            wanted = lower[wanted.lower()]
        else:
            close = difflib.get_close_matches(wanted, names, n=3)
            hint = f"; did you mean {', '.join('zoo/' + c[:-4] for c in close)}?" if close else ""
            raise UsageError(f"{spec!r}: the Topology Zoo has no topology {rest!r}{hint}")
    return [ensure_installed() / wanted]
