"""The ``bpf`` format: per source router a bpftool batch file and a binary file.

``bpf-<variant>/<router>.batch`` holds one ``map update pinned PIN key hex .. value hex ..``
command per entry (load it with ``bpftool batch file``); ``<router>.bin`` the same records for a
loader of one's own; ``index.json`` lists them. The values follow docs/srh-map.md byte for byte
(:mod:`tpcstudy.export.layout`). :func:`records_of_binary` and :func:`records_of_batch` read
both back (``tpcstudy export --inspect``).

Binary file layout (``bpf-<variant>/<router>.bin``, little-endian integers)::

    offset size  field
    0      8     magic b"TPCSRHMP"
    8      4     u32 format version (1)
    12     4     u32 variant code (0 n_rto, 1 exp3_lowest_completion, 2 exp3_lowest_delay)
    16     4     u32 value size (1556, 1652 or 1684)
    20     4     u32 record count N
    24     16    map name, NUL-padded ASCII ("dest_map" or "short_dest_map")
    40     16    loopback of the source router (network order)
    56     ...   N records: 8-byte key (the map key's bytes: first 64 bits of the destination
                 prefix, network order) followed by the value (value size bytes)
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import struct
from pathlib import Path
from typing import Any, Dict, Iterator, List, Sequence, Set, Tuple

from ..errors import ExportError, UsageError
from ..io import json_text, read_bounded
from .layout import KEY_SIZE, VARIANTS, Variant, encode_value
from .table import Entry, PathTable

__all__ = ["BIN_MAGIC", "BIN_VERSION", "BIN_HEADER", "render", "check_pin", "safe_names",
           "records_of_binary", "records_of_batch", "variant_of_size", "read_index", "read_batch",
           "read_json", "copy_batch", "bpffs_pin", "MAX_TABLE_FILE"]

BIN_MAGIC = b"TPCSRHMP"
BIN_VERSION = 1
BIN_HEADER = struct.Struct("<8sIIII16s16s")  # 56 bytes


def safe_names(routers: Sequence[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    used: Set[str] = set()
    for r in routers:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", r).strip("._-") or "router"
        name, i = base, 2
        while name.lower() in used:
            name, i = f"{base}-{i}", i + 1
        used.add(name.lower())
        out[r] = name
    return out


def check_pin(pin: str) -> str:
    if not pin or any(c.isspace() for c in pin) or any(c in pin for c in "#'\"\\"):
        raise UsageError(f"pinned map path {pin!r} must be non-empty without spaces, quotes, "
                         f"backslashes or '#' (bpftool batch files split on them)")
    return pin


def _comment(text: str) -> str:
    return "# " + re.sub(r"[\r\n]+", " ", text)


def _hex(data: bytes) -> str:
    return data.hex(" ")


def render(table: PathTable, v: Variant, pin: str) -> Iterator[Tuple[str, bytes]]:
    by_source: Dict[str, List[Entry]] = {}
    for e in table.entries:
        by_source.setdefault(e.source, []).append(e)
    safe = safe_names(list(by_source))
    index: Dict[str, Any] = {"variant": v.name, "map": v.map_name, "value_size": v.value_size, "pin": pin,
             "topology": table.topology, "binary_layout": _BIN_DOC, "sources": {}}
    for src, entries in by_source.items():
        loop = table.plan.loopbacks.get(src)
        values = [encode_value(e.prefix, e.paths, v.name, allow_wide_prefix=True) for e in entries]
        lines = [_comment(f"tpcstudy export: TPC agent paths of source router {src!r} "
                          f"(loopback {loop}), topology {table.topology!r}"),
                 _comment(f"variant {v.name}: map {v.map_name}, {v.value_size}-byte values, "
                          f"{len(entries)} entries; load with: bpftool batch file THIS_FILE")]
        for e, val in zip(entries, values):
            lines.append(_comment(f"{e.destination} {e.prefix}: {len(e.paths)} paths"))
            lines.append(f"map update pinned {pin} key hex {_hex(e.key)} value hex {_hex(val)}")
        header = BIN_HEADER.pack(BIN_MAGIC, BIN_VERSION, v.code, v.value_size, len(entries),
                                 v.map_name.encode("ascii"),
                                 loop.packed if loop is not None else bytes(16))
        blob = header + b"".join(e.key + val for e, val in zip(entries, values))
        base = safe[src]
        index["sources"][src] = {"batch": f"{base}.batch", "binary": f"{base}.bin",
                                 "loopback": str(loop) if loop else None,
                                 "entries": len(entries)}
        yield f"{base}.batch", ("\n".join(lines) + "\n").encode("utf-8")
        yield f"{base}.bin", blob
    yield "index.json", json_text(index).encode("utf-8")


_BIN_DOC = ("56-byte header <8sIIII16s16s: magic 'TPCSRHMP', version 1, variant code (0 n_rto, 1 "
            "exp3_lowest_completion, 2 exp3_lowest_delay), value size, record count, map name "
            "(NUL-padded), source loopback; then per record the 8-byte map key and the value")


def variant_of_size(size: int, where: str) -> Variant:
    for v in VARIANTS.values():
        if v.value_size == size:
            return v
    raise ExportError(f"{where}: a {size}-byte value matches no agent variant "
                      f"({', '.join(f'{v.name} {v.value_size}' for v in VARIANTS.values())})")


def records_of_binary(data: bytes, where: str) -> Tuple[Dict[str, Any], List[Tuple[bytes, bytes]]]:
    if len(data) < BIN_HEADER.size:
        raise ExportError(f"{where}: too short for a tpcstudy binary path file")
    magic, version, code, size, count, mapname, loop = BIN_HEADER.unpack_from(data, 0)
    if magic != BIN_MAGIC:
        raise ExportError(f"{where}: not a tpcstudy binary path file (magic {magic!r})")
    if version != BIN_VERSION:
        raise ExportError(f"{where}: binary format version {version}, expected {BIN_VERSION}")
    v = next((x for x in VARIANTS.values() if x.code == code), None)
    if v is None or v.value_size != size:
        raise ExportError(f"{where}: variant code {code} with {size}-byte values is unknown")
    rec = KEY_SIZE + size
    if len(data) != BIN_HEADER.size + count * rec:
        raise ExportError(f"{where}: {len(data)} bytes, expected {BIN_HEADER.size + count * rec} "
                          f"for {count} records of {rec} bytes")
    out = [(data[o:o + KEY_SIZE], data[o + KEY_SIZE:o + rec])
           for o in range(BIN_HEADER.size, len(data), rec)]
    head = {"variant": v.name, "map": mapname.rstrip(b"\0").decode("ascii", "replace"),
            "source_loopback": str(ipaddress.IPv6Address(loop)) if any(loop) else None}
    return head, out


def _hex_bytes(tokens: List[str]) -> bytes:
    """One byte per token, each hex (bpftool's ``hex`` form): ``bytes.fromhex`` when every
    token is two digits (as exported; one C call), else token by token (``1``, ``0x1f``)."""
    try:
        out = bytes.fromhex(" ".join(tokens))
        if len(out) == len(tokens):
            return out
    except ValueError:
        pass
    return bytes(int(x, 16) for x in tokens)


def records_of_batch(text: str, where: str) -> Tuple[Dict[str, Any], List[Tuple[bytes, bytes]]]:
    out: List[Tuple[bytes, bytes]] = []
    pins = set()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tok = line.split()
        if tok[0] == "bpftool":
            tok = tok[1:]
        try:
            if tok[:3] != ["map", "update", "pinned"] or tok[4:6] != ["key", "hex"]:
                raise ValueError
            vi = tok.index("value")
            if tok[vi + 1] != "hex":
                raise ValueError
            key = _hex_bytes(tok[6:vi])
            val = _hex_bytes(tok[vi + 2:])
        except (ValueError, IndexError):
            raise ExportError(f"{where}:{lineno}: not a 'map update pinned PATH key hex .. value "
                              f"hex ..' command") from None
        if len(key) != KEY_SIZE:
            raise ExportError(f"{where}:{lineno}: key of {len(key)} bytes, expected {KEY_SIZE}")
        pins.add(tok[3])
        out.append((key, val))
    sizes = {len(v) for _, v in out}
    if len(sizes) > 1:
        raise ExportError(f"{where}: values of several sizes {sorted(sizes)}")
    v = variant_of_size(sizes.pop(), where) if sizes else VARIANTS["n_rto"]
    return {"variant": v.name, "map": ", ".join(sorted(pins)) or v.map_name,
            "source_loopback": None}, out


# --------------------------------------------------------------------------- reading a table
#: Largest table file read (a batch file of the widest value and 1024 entries is ~11 MB).
MAX_TABLE_FILE = 64 << 20
_BPFFS_PIN = re.compile(r"^/sys/fs/bpf/[A-Za-z0-9_./-]+$")


def bpffs_pin(pin: str, where: str = "") -> str:
    """``pin`` if it is a plain path under ``/sys/fs/bpf/`` (letters, digits, ``_ . / -``, no
    ``..`` component): the only pin a table read as root may name."""
    if (not isinstance(pin, str) or not _BPFFS_PIN.match(pin) or len(pin) > 255
            or ".." in pin.split("/")):
        raise UsageError(f"{where + ': ' if where else ''}pin path {str(pin)[:80]!r} is not a "
                         f"plain path under /sys/fs/bpf/ (letters, digits, '_', '.', '/', '-')")
    return pin


def read_text(path: Path) -> str:
    """A table file as text (bounded, no link followed, UTF-8)."""
    try:
        return read_bounded(path, MAX_TABLE_FILE).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExportError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def read_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except ValueError as exc:
        raise ExportError(f"{path}: not JSON ({exc})") from None


def read_index(d: Path) -> Tuple[str, Dict[str, Dict[str, str]]]:
    """``bpf-<variant>/index.json``: the variant and, per source router, its files (each a
    plain file name inside ``d``); anything else is an :class:`~tpcstudy.errors.ExportError`
    naming the file."""
    where = d / "index.json"
    doc = read_json(where)
    if not isinstance(doc, dict) or doc.get("variant") not in VARIANTS \
            or not isinstance(doc.get("sources"), dict):
        raise ExportError(f"{where}: expected {{'variant': one of {', '.join(VARIANTS)}, "
                         f"'sources': {{router: {{'batch': FILE, ...}}}}}}")
    sources: Dict[str, Dict[str, str]] = {}
    for src, info in doc["sources"].items():
        if not isinstance(info, dict) or not isinstance(info.get("batch"), str):
            raise ExportError(f"{where}: source {str(src)[:60]!r} has no 'batch' file name")
        for k in ("batch", "binary"):
            name = info.get(k)
            if name is not None and (not isinstance(name, str) or not name or "/" in name
                                     or name in (".", "..") or "\0" in name):
                raise ExportError(f"{where}: source {str(src)[:60]!r}: {k} {str(name)[:60]!r} "
                                 f"is not a file name inside {d.name}/")
        sources[str(src)] = {k: v for k, v in info.items() if k in ("batch", "binary")}
    return str(doc["variant"]), sources


def read_batch(path: Path) -> Tuple[Set[str], List[Tuple[bytes, bytes]]]:
    """A batch file's pin paths and records, strictly (every line a ``map update pinned``)."""
    head, recs = records_of_batch(read_text(path), str(path))
    return set(head["map"].split(", ")), recs


def copy_batch(batch: Path, folder: Path, limit: int = 1024
               ) -> Tuple[Path, str, List[Tuple[bytes, bytes]]]:
    """Copy ``batch`` into the private ``folder`` (a new file, no link followed), check the
    copy and return it with its one pin path (a plain path under ``/sys/fs/bpf/``) and its
    records: what bpftool then loads is exactly what was checked."""
    copy = folder / "table.batch"
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(read_bounded(batch, MAX_TABLE_FILE))
    pins, recs = read_batch(copy)
    if len(pins) != 1:
        raise ExportError(f"{batch}: {len(pins)} pin paths, expected one")
    if len(recs) > limit:
        raise ExportError(f"{batch}: {len(recs)} entries, the agent's map holds {limit}")
    keys = [k for k, _ in recs]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ExportError(f"{batch}: key {dup.hex()} appears {keys.count(dup)} times")
    return copy, bpffs_pin(pins.pop(), str(batch)), recs
