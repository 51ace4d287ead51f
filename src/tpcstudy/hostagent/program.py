"""The host agent's BPF objects: one per exported map layout, compiled from ``bpf/tpc_hostagent.bpf.c``.

The objects are built when the package is installed where clang and libbpf's headers are
present (``CMakeLists.txt`` runs ``python -m tpcstudy.hostagent.program OUTDIR``, this module's
:func:`main`), else on first use into the data cache (``$TPCSTUDY_DATA/hostagent/<source
hash>/``). :func:`object_for` finds or builds the object of a layout and says exactly which
Debian packages are missing when it cannot. This module imports nothing of tpcstudy but its
errors (the build runs it before the package is installed).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import HostAgentError

__all__ = ["LAYOUTS", "SOURCE", "object_for", "build", "clang_argv", "HostAgentError",
           "object_name", "PACKAGES"]

SOURCE = Path(__file__).resolve().parent / "bpf" / "tpc_hostagent.bpf.c"
#: Value size -> the map's name, as the three exported variants define them (docs/srh-map.md
#: §1). Written out, not read from :data:`tpcstudy.export.layout.VARIANTS`: the build runs this
#: module before the C++ core exists, and the export package imports it (through ``io``);
#: tests/hostagent/test_c_matches_python.py holds the two equal.
LAYOUTS: Dict[int, str] = {1556: "dest_map", 1652: "short_dest_map", 1684: "short_dest_map"}
#: Debian packages that build and load the programs.
PACKAGES = "clang llvm libbpf-dev bpftool"


def object_name(value_size: int) -> str:
    return f"tpc_hostagent-{value_size}.o"


def _clang() -> Optional[str]:
    for name in ("clang", *(f"clang-{v}" for v in range(20, 13, -1))):
        path = shutil.which(name)
        if path:
            return path
    return None


def _multiarch_include() -> List[str]:
    """``<asm/types.h>`` lives in Debian's multiarch folder (``/usr/include/x86_64-linux-gnu``)."""
    for cc in ("gcc", "cc"):
        if shutil.which(cc):
            out = subprocess.run([cc, "-print-multiarch"], capture_output=True, text=True)
            arch = out.stdout.strip()
            if out.returncode == 0 and arch and Path("/usr/include", arch).is_dir():
                return [f"-I/usr/include/{arch}"]
    return []


def clang_argv(clang: str, value_size: int, out: Path, source: Path = SOURCE) -> List[str]:
    """The compile command of one layout's object."""
    return [clang, "-O2", "-g", "-Wall", "-target", "bpf", f"-DVALUE_SIZE={value_size}",
            f"-DMAP_NAME={LAYOUTS[value_size]}", *_multiarch_include(), "-c", str(source),
            "-o", str(out)]


def _missing() -> List[str]:
    miss = []
    if _clang() is None:
        miss.append("clang (apt-get install clang llvm)")
    if not Path("/usr/include/bpf/bpf_helpers.h").is_file():
        miss.append("libbpf's headers (apt-get install libbpf-dev)")
    return miss


def build(out_dir: Path, sizes: Sequence[int] = tuple(LAYOUTS)) -> List[Path]:
    """Compile the objects of ``sizes`` into ``out_dir`` (written to a temporary name, then
    renamed); :class:`HostAgentError` naming the missing packages or quoting clang."""
    miss = _missing()
    if miss:
        raise HostAgentError("cannot build the BPF host agent: missing " + "; ".join(miss)
                             + f" (Debian: apt-get install {PACKAGES})")
    clang = _clang()
    assert clang is not None
    out_dir.mkdir(parents=True, exist_ok=True)
    made = []
    for size in sizes:
        final = out_dir / object_name(size)
        tmp = out_dir / f".{final.name}.{os.getpid()}"
        r = subprocess.run(clang_argv(clang, size, tmp), capture_output=True, text=True)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise HostAgentError(f"clang could not compile {SOURCE.name} for the {size}-byte "
                                 f"layout: {(r.stderr or r.stdout).strip()[-600:]}")
        os.replace(tmp, final)
        made.append(final)
    return made


def _source_hash() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]


def _cache_dir() -> Path:
    base = os.environ.get("TPCSTUDY_DATA") or os.path.join(os.path.expanduser("~"), ".cache",
                                                          "tpcstudy")
    return Path(base) / "hostagent" / _source_hash()


def _packaged() -> Tuple[Path, Optional[str]]:
    """The folder the build installed the objects in, and the source hash they were made from."""
    d = SOURCE.parent
    stamp = d / "SOURCE_SHA256"
    return d, stamp.read_text().strip() if stamp.is_file() else None


def object_for(value_size: int) -> Path:
    """The object of the ``value_size``-byte layout: the installed one if it was built from this
    source, else one in the data cache (built now if needed)."""
    if value_size not in LAYOUTS:
        raise HostAgentError(f"no BPF host agent for {value_size}-byte values (the exported "
                             f"layouts: {', '.join(map(str, LAYOUTS))})")
    d, stamp = _packaged()
    if stamp == _source_hash() and (d / object_name(value_size)).is_file():
        return d / object_name(value_size)
    cache = _cache_dir()
    obj = cache / object_name(value_size)
    if not obj.is_file():
        build(cache, [value_size])
    return obj


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m tpcstudy.hostagent.program OUTDIR``: build every layout's object into
    ``OUTDIR`` with the source's hash beside them (the package build); without clang or
    libbpf's headers it says so and builds nothing (the objects are then built on first use)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m tpcstudy.hostagent.program OUTDIR", file=sys.stderr)
        return 2
    out = Path(args[0])
    miss = _missing()
    if miss:
        print(f"tpcstudy: BPF host agent not built now ({'; '.join(miss)}): it is built on "
              f"first use", file=sys.stderr)
        return 0
    build(out)
    (out / "SOURCE_SHA256").write_text(_source_hash() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
