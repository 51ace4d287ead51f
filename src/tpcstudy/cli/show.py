"""``tpcstudy show DIR``: any results folder's summary again, without re-running (``--json``:
the same as data)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
from pathlib import Path
from typing import Any, Dict, List

from ..emulate.experiments.harness import caveats
from ..errors import UsageError
from ..io import read_bounded
from ..study.kinds import kind
from ..study.store import Results, cell_float, load_results
from ..study.summary import failed_rows, plain, provenance, summary_data, summary_line, summary_text

#: summary.csv and verdicts.csv hold one row per arm or pair: far below this.
_CSV_LIMIT = 64 << 20


def register(sub: Any) -> None:
    p = sub.add_parser(
        "show", help="print a results folder's summary again (maxflow, disjoint, topo stats, "
                     "emulate)",
        description="Print the summary of a results folder (or a topo stats CSV/JSON) without "
                    "re-running anything: the table the study printed, the one-line summary "
                    "beside the paper's, and for an emulation the intervals and verdicts of "
                    "its draws (summary.csv, verdicts.csv).")
    p.add_argument("inputs", nargs="+", metavar="DIR_OR_FILE", help="results folders or files")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object per input (NaN as null, infinity as \"inf\")")
    p.add_argument("--k", type=int, default=None,
                   help="sr segment limit of the one-line max-flow summary (default 4, else the "
                        "largest)")
    p.add_argument("--aggregate", choices=("topology", "pooled"), default="topology",
                   help="a max-flow study's medians: per-topology means first, or pooled over "
                        "every (topology, seed) value as the paper's Figure 6")
    p.set_defaults(func=cmd_show)


def _number(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text


def _read_csv(path: Path) -> List[Dict[str, Any]]:
    if not path.is_file():
        return []
    try:
        text = read_bounded(path, _CSV_LIMIT).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return [{k: _number(v) for k, v in row.items() if k is not None}
            for row in csv.DictReader(io.StringIO(text))]


def _label(x: Any) -> str:
    """A label cell as written (``20.0`` read back as a number prints as ``20``)."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _cell(row: Dict[str, Any], col: str) -> str:
    def f(x: Any) -> str:
        if not isinstance(x, float):
            return str(x)
        return "inf" if math.isinf(x) else ("-" if math.isnan(x) else f"{x:.4g}")
    v, lo, hi = row.get(col), row.get(f"{col}_lo"), row.get(f"{col}_hi")
    if isinstance(lo, float) and isinstance(hi, float) and not (math.isnan(lo) or math.isnan(hi)):
        return f"{f(v)} [{f(lo)}, {f(hi)}]"
    return f(v)


def _emulate(results: Results, as_json: bool) -> str:
    folder = Path(results.source)
    folder = folder if folder.is_dir() else folder.parent
    summary, verdicts = _read_csv(folder / "summary.csv"), _read_csv(folder / "verdicts.csv")
    line = summary_line(results)
    warnings = caveats(list(results))
    if as_json:
        return json.dumps(plain({**provenance(results), "summary_line": line,
                                 "summary": summary, "verdicts": verdicts,
                                 "warnings": warnings}), sort_keys=False)
    lines = [line]
    if summary:
        metrics = [c for c in summary[0] if f"{c}_lo" in summary[0] and f"{c}_hi" in summary[0]]
        labels = [c for c in summary[0] if c not in metrics and not c.endswith(("_lo", "_hi"))
                  and c != "interval"]
        lines.append("")
        lines.append(f"over the draws ({summary[0].get('interval', '95 %')}):")
        lines.append(" | ".join(labels + metrics))
        for r in summary:
            lines.append(" | ".join([_label(r.get(c, "")) for c in labels]
                                    + [_cell(r, m) for m in metrics]))
    differ = [v for v in verdicts if v.get("verdict") not in ("tie", "", None)]
    single = [v for v in verdicts if not cell_float(v.get("draws")) >= 2]  # one draw's "tie": nothing
    if verdicts:
        lines.append("")
        if len(single) == len(verdicts):
            lines.append(f"paired verdicts: none ({len(verdicts)} comparisons of one draw "
                         "each; --repeat 2 or more compares arms within a network)")
        else:
            lines.append(f"paired verdicts: {len(differ)} of {len(verdicts) - len(single)} "
                         "comparisons differ"
                         + (f" ({len(single)} of one draw left out)" if single else ""))
        for v in differ:
            lines.append(f"  {v.get('metric')}: {v.get('a')} {v.get('verdict')} than {v.get('b')}")
    return "\n".join(lines + warnings)


def cmd_show(args: argparse.Namespace) -> int:
    """Exit 1 when an input holds failed rows (as the study that wrote it did), else 0."""
    status = 0
    for path in args.inputs:
        results = load_results(path)
        if kind(results.kind).emulated:
            text = _emulate(results, args.json)
        elif args.json:
            text = json.dumps(summary_data(results, k=args.k, aggregate=args.aggregate),
                              sort_keys=False)
        else:
            text = f"{results.source} ({results.kind}, {len(results)} rows)\n" + \
                summary_text(results, aggregate=args.aggregate, k=args.k)
        if results.writer is not None:  # a live run holds the folder's lock: rows are partial
            if args.json:
                text = json.dumps({**json.loads(text), "running_pid": results.writer,
                                   "partial": True}, sort_keys=False)
            else:
                text = f"{results.source}: still running (pid {results.writer}): partial\n" + text
        failed = failed_rows(results)
        if failed and not args.json:
            text += f"\n{failed} failed rows (see the error column of {results.source})"
        print(text)
        status = max(status, 1 if failed else 0)
    return status
