"""Path tables for the TPC eBPF agent (``tpcstudy export``; docs/method.md §6, docs/srh-map.md).

- :mod:`~tpcstudy.export.table`: the model (:class:`PathTable`, :class:`Entry`,
  :class:`PathRecord`), its validation and pairs files;
- :mod:`~tpcstudy.export.select`: which paths each host gets (:func:`path_table`);
- :mod:`~tpcstudy.export.addressing`: loopbacks and host prefixes (the default plan, user plans);
- :mod:`~tpcstudy.export.layout`: the agent's map values, byte for byte;
- one module per output format: :mod:`~tpcstudy.export.jsonfile` (``json``),
  :mod:`~tpcstudy.export.bpf` (``bpf``), :mod:`~tpcstudy.export.ovsdb` (``ovsdb``), written
  together by :func:`write_paths` (staged, all or nothing);
- :mod:`~tpcstudy.export.decode`: reading an exported file back (:func:`inspect_file`).
"""

from __future__ import annotations

from .addressing import AddressPlan, default_plan, plan_from_dict, read_plan
from .decode import format_inspection, inspect_file
from .layout import (
                     BASE_SIZE,
                     KEY_SIZE,
                     MAX_PATHS,
                     MAX_SEGMENTS,
                     SLOT_SIZE,
                     SRH_SIZE,
                     SRH_TYPE,
                     SRTT_OFFSET,
                     VARIANTS,
                     WEIGHTS_OFFSET,
                     DecodedPath,
                     DecodedValue,
                     Variant,
                     decode_value,
                     encode_value,
)
from .select import SELECT_RULES, path_table
from .table import Entry, PathRecord, PathTable, read_pairs, validate_table
from .writer import FORMATS, write_paths

__all__ = [
    "PathRecord", "Entry", "PathTable", "path_table", "write_paths", "validate_table",
    "read_pairs", "encode_value", "decode_value", "DecodedPath", "DecodedValue", "inspect_file",
    "format_inspection", "Variant", "VARIANTS", "FORMATS", "SELECT_RULES", "MAX_PATHS",
    "MAX_SEGMENTS", "SRH_SIZE", "SLOT_SIZE", "BASE_SIZE", "WEIGHTS_OFFSET", "SRTT_OFFSET",
    "KEY_SIZE", "SRH_TYPE", "AddressPlan", "default_plan", "read_plan", "plan_from_dict",
]
