"""The disjoint study's failures, ``tpcstudy disjoint --failures SPEC`` (docs/method.md §5): the
exported path set of every pair (slot 0 = the IGP shortest path occupying its ECMP DAG, then the
``sps`` k = 4 paths, at most 5; :meth:`~tpcstudy.paths.DisjointPathBatch.exported`) under every
scenario of SPEC (:func:`tpcstudy.models.failures.scenarios`: ``links``, ``links:N``,
``srlg:FILE``, ``nodes``).

One row per (topology, scenario): ``method = "failure"``, ``k = 4``, ``failure`` = the scenario's
id, ``failure_kind`` = links / srlg / nodes, and over the **counted** pairs (neither router
failed, joined in the intact graph: ``pairs``):

- ``default_hit_share``: slot 0 crosses a failed link (its packets are lost until something
  reacts);
- ``survive_share``: some exported path avoids every failed link: the host can move the
  connection at once, before the IGP re-converges (what the TPC agent's NRTOChanger does);
- ``stranded_share``: no exported path survives although the failed graph still joins the pair
  (the table fails the pair until the IGP re-converges or a new table arrives);
- ``disconnected``: the pairs the failure disconnects (no table could help them).

``survive_share + stranded_share + disconnected / pairs = 1``: a surviving path joins the pair.
A path is hit when any link it occupies fails (a segment's ECMP DAG with one failed branch
loses what it sends there). Paths are link-disjoint by router adjacency (parallel links merged,
§5): an adjacency fails when every one of its parallel links fails.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import numpy as np
from scipy.sparse import csr_matrix

from ..models.failures import Scenario, parse_failures
from ..paths import DisjointPathBatch
from ..topology import Topology, component_labels, without_link_ids
from .store import cell_number

__all__ = ["ExportedSets", "Outcome", "adjacency_failures", "scenario_outcome", "scenario_rows",
           "summarize_failures", "format_failures", "failure_kind"]


def failure_kind(spec: str) -> str:
    """The ``failure_kind`` of the rows of a ``--failures`` value: links, srlg or nodes."""
    return parse_failures(spec)[0]


class ExportedSets:
    """The exported path set of every pair of an ``sps`` batch, as a link-by-path incidence
    (the batch's own link lists, sorted by link once): which exported paths a set of failed
    links hits, vectorised over the pairs."""

    def __init__(self, sps: DisjointPathBatch, num_links: int, max_paths: int) -> None:
        n = len(sps)
        npaths = int(sps.pair_offsets[-1])
        self.exported = np.zeros(npaths, dtype=bool)
        self.first = np.zeros(n, dtype=np.int64)  # slot 0 of each pair (a batch path index)
        self.sizes = np.zeros(n, dtype=np.int64)
        for i in range(n):
            chosen = sps.exported(i, max_paths)
            if chosen:
                self.exported[chosen] = True
                self.first[i], self.sizes[i] = chosen[0], len(chosen)
        self.pair_of = np.repeat(np.arange(n), np.diff(sps.pair_offsets))
        # every path of the batch a row (its links as the batch holds them), turned by link
        idx = np.int32 if len(sps.links) < 2 ** 31 - 1 else np.int64
        self.by_link = csr_matrix((np.ones(len(sps.links), dtype=np.int8),
                                   np.asarray(sps.links, dtype=idx),
                                   np.asarray(sps.link_offsets, dtype=idx)),
                                  shape=(npaths, num_links)).tocsc()

    def __len__(self) -> int:
        return len(self.sizes)

    def hit(self, failed: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
        """Per pair: (slot 0 crosses a failed link, some exported path avoids them all)."""
        hit = np.zeros(self.by_link.shape[0], dtype=bool)
        ptr, idx = self.by_link.indptr, self.by_link.indices
        for j in failed:
            hit[idx[ptr[j]:ptr[j + 1]]] = True
        alive = np.bincount(self.pair_of, weights=self.exported & ~hit, minlength=len(self)) > 0
        return (self.sizes > 0) & hit[self.first], alive


def adjacency_failures(topo: Topology, merged: Topology, sc: Scenario) -> np.ndarray:
    """The links of ``merged`` (``topo`` with parallel links merged, the graph the paths live
    on) that ``sc`` (links of ``topo``) fails: an adjacency fails when all its links fail."""
    if merged is topo:
        return np.unique(np.asarray(sc.links, dtype=np.int64))
    n = max(topo.num_nodes, 1)
    mcode = merged.link_u.astype(np.int64) * n + merged.link_v
    adj = np.searchsorted(mcode, topo.link_u.astype(np.int64) * n + topo.link_v)
    total = np.bincount(adj, minlength=merged.num_links)
    gone = np.bincount(adj[list(sc.links)], minlength=merged.num_links)
    return np.flatnonzero((gone == total) & (total > 0))


@dataclass
class Outcome:
    """One scenario's verdict per pair (bool arrays; every one but ``counted`` is within it)."""

    counted: np.ndarray       # neither router failed, joined in the intact graph
    default_hit: np.ndarray   # slot 0 crosses a failed link
    survive: np.ndarray       # some exported path avoids every failed link
    stranded: np.ndarray      # none does, yet the failed graph joins the pair
    disconnected: np.ndarray  # the failed graph does not join the pair


def scenario_outcome(sets: ExportedSets, merged: Topology, sources: np.ndarray,
                     targets: np.ndarray, intact: np.ndarray, failed: np.ndarray,
                     nodes: Sequence[int] = ()) -> Outcome:
    """The outcome of failing the links ``failed`` of ``merged`` (and the routers ``nodes``)
    for the pairs ``sources -> targets`` whose exported sets are ``sets``; ``intact``: the
    component label of each router in the intact graph."""
    default, alive = sets.hit(failed.tolist())
    dead = np.isin(sources, np.asarray(nodes, dtype=np.int64)) | \
        np.isin(targets, np.asarray(nodes, dtype=np.int64))
    counted = (intact[sources] == intact[targets]) & ~dead
    labels = component_labels(without_link_ids(merged, failed.tolist())[0]) if len(failed) \
        else intact
    disconnected = counted & (labels[sources] != labels[targets])
    survive = counted & alive
    return Outcome(counted, counted & default, survive, counted & ~alive & ~disconnected,
                   disconnected)


def _share(mask: np.ndarray, of: int) -> float:
    return float(mask.sum()) / of if of else math.nan


def scenario_rows(topo: Topology, merged: Topology, sources: np.ndarray, targets: np.ndarray,
                  sps: DisjointPathBatch, scenarios: Sequence[Scenario], kind: str,
                  base: Mapping[str, Any], *, k: int, max_paths: int) -> List[Dict[str, Any]]:
    """The rows of every scenario (module docstring); ``base``: the topology's columns."""
    t0 = time.perf_counter()
    sets = ExportedSets(sps, merged.num_links, max_paths)
    intact = component_labels(merged)
    setup = time.perf_counter() - t0
    rows = []
    for sc in scenarios:
        t0 = time.perf_counter()
        o = scenario_outcome(sets, merged, sources, targets, intact,
                             adjacency_failures(topo, merged, sc), sc.nodes)
        n = int(o.counted.sum())
        rows.append({**base, "method": "failure", "k": k, "failure": sc.id, "failure_kind": kind,
                     "pairs": n, "default_hit_share": _share(o.default_hit, n),
                     "survive_share": _share(o.survive, n),
                     "stranded_share": _share(o.stranded, n),
                     "disconnected": int(o.disconnected.sum()),
                     "seconds": time.perf_counter() - t0 + setup / max(len(scenarios), 1)})
    return rows


# --------------------------------------------------------------------------- summary
def _num(r: Mapping[str, Any], col: str) -> float:
    v = cell_number(r.get(col))
    return math.nan if v is None else v


def summarize_failures(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Per failure kind, over the scenario rows (``ok``, with counted pairs): the surviving
    share's minimum and quartiles over (topology, failure); the shares of (pair, failure)
    pooled (default path hit, surviving, stranded; of the hit ones, the share a backup saves);
    the disconnected pairs; and each topology's worst failure as a count of pairs left without
    a working exported path."""
    sc = [r for r in rows if r.get("method") == "failure" and r.get("failure") not in (None, "")
          and (r.get("status") or "ok") == "ok" and (cell_number(r.get("pairs")) or 0) > 0
          and cell_number(r.get("survive_share")) is not None]
    kinds: List[Dict[str, Any]] = []
    for kind in sorted({str(r.get("failure_kind") or "") for r in sc}):
        rs = [r for r in sc if str(r.get("failure_kind") or "") == kind]
        w = np.array([_num(r, "pairs") for r in rs])
        sv = np.array([_num(r, "survive_share") for r in rs])
        hit = np.array([_num(r, "default_hit_share") for r in rs])
        st = np.array([_num(r, "stranded_share") for r in rs])
        disc = np.array([_num(r, "disconnected") for r in rs])
        q = np.percentile(sv, [0, 25, 50, 75])
        pooled_hit = float((hit * w).sum() / w.sum())
        # a pair whose slot 0 is not hit survives on it: the hit ones that survive are the rest
        saved = float(((sv - (1 - hit)) * w).sum())
        kinds.append({
            "kind": kind, "scenarios": len(rs), "topologies": len({r["topology"] for r in rs}),
            "survive_min": float(q[0]), "survive_q1": float(q[1]),
            "survive_median": float(q[2]), "survive_q3": float(q[3]),
            "survive_pooled": float((sv * w).sum() / w.sum()),
            "default_hit_pooled": pooled_hit,
            "stranded_pooled": float((st * w).sum() / w.sum()),
            "backup_saves": saved / float((hit * w).sum()) if pooled_hit > 0 else math.nan,
            "pair_failures": int(w.sum()),
            "scenarios_disconnecting": int((disc > 0).sum()),
            "pairs_disconnected": int(disc.sum())})
    worst: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for r in sc:
        n = int(_num(r, "pairs"))
        stranded = int(round(_num(r, "stranded_share") * n))
        lost = int(_num(r, "disconnected"))
        key = (str(r.get("failure_kind") or ""), str(r["topology"]))
        cur: Dict[str, Any] = {"topology": key[1], "kind": key[0], "failure": str(r["failure"]),
                               "pairs": n, "lost": stranded + lost, "stranded": stranded,
                               "disconnected": lost}
        old = worst.get(key)
        if old is None or (cur["lost"], cur["stranded"]) > (old["lost"], old["stranded"]):
            worst[key] = cur
    return {"kinds": kinds, "worst": [worst[k] for k in sorted(worst)]}


def format_failures(s: Mapping[str, Any], *, worst: int = 12) -> List[str]:
    """:func:`summarize_failures` as text lines (none when there are no scenario rows)."""
    lines: List[str] = []
    for x in s["kinds"]:
        lines += ["", f"failures ({x['kind']}: {x['scenarios']} scenarios on {x['topologies']} "
                      f"topologies, {x['pair_failures']} (pair, failure))",
                  "  pairs whose exported set keeps a path avoiding the failure, over "
                  "(topology, failure):",
                  f"    min {x['survive_min']:.3f}  q1 {x['survive_q1']:.3f}  median "
                  f"{x['survive_median']:.3f}  q3 {x['survive_q3']:.3f}   pooled over "
                  f"(pair, failure): {x['survive_pooled']:.3f}",
                  f"  default path hit {100 * x['default_hit_pooled']:.2f} % of (pair, failure); "
                  f"of those a backup survives in {100 * x['backup_saves']:.1f} %",
                  f"  stranded (connected, no surviving exported path) "
                  f"{100 * x['stranded_pooled']:.2f} % of (pair, failure)",
                  f"  scenarios that disconnect pairs: {x['scenarios_disconnecting']} "
                  f"({x['pairs_disconnected']} pairs in all)"]
        ws = sorted((w for w in s["worst"] if w["kind"] == x["kind"]),
                    key=lambda w: (-w["lost"], -w["stranded"], w["topology"]))
        if ws:
            lines.append(f"  worst failure per topology (pairs left without a working exported "
                         f"path; the {min(worst, len(ws))} worst of {len(ws)}):")
            for w in ws[:worst]:
                lines.append(f"    {w['topology']}: {w['failure']}: {w['lost']} of {w['pairs']} "
                             f"pairs ({w['stranded']} stranded, {w['disconnected']} "
                             f"disconnected)")
    return lines
