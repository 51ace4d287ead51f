"""The one registry of results kinds: what a results folder or file can hold.

Each kind is listed once (:data:`KINDS`), with its columns and key (what its writer stores), the
columns that tell a bare CSV of it, its one-line summary, its figure's file name and the
function that draws it. The store (:mod:`.store`), the summaries (:mod:`.summary`), ``tpcstudy
show``, ``tpcstudy plot`` and the emulator's experiments all read this table: a new kind is
added here and nowhere else.

The summary and the plot live in higher layers (the emulator's experiments, :mod:`tpcstudy.
plotting`), which import this module; so they are named here as ``"module:function"`` and
imported by :meth:`Kind.summary_function` / :meth:`Kind.plot_function` only when called.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Callable, Dict, Optional, Tuple

from ..errors import UsageError

__all__ = ["Kind", "KINDS", "kind", "EMULATE_PREFIX"]

#: Every emulation kind's name starts so (``tpcstudy emulate ... --out``).
EMULATE_PREFIX = "emulate-"


@dataclasses.dataclass(frozen=True)
class Kind:
    """One results kind.

    Attributes
    ----------
    name
        As ``meta.json`` records it (``study.kind``).
    columns, key
        The CSV columns in order and the columns that identify a row.
    figure
        The file name (no suffix) of its figure (``tpcstudy plot``).
    summary
        ``"module:function"`` of its one-line summary. An emulation kind's takes the rows; a
        study kind's is its summary module's ``summary_line`` (that module also has
        ``summarize`` and ``format_summary``: what the study printed).
    plot
        ``"module:function"`` drawing its figure from the rows.
    command
        The command that writes it (what ``--overwrite`` re-runs).
    sniff
        Columns that, all present, tell a bare CSV (no ``meta.json``) of this kind.
    required, numeric
        Columns a summary reads (a file without them is refused); columns whose cells of an
        ``ok`` row must be numbers or empty.
    previous
        The column lists the kind had before columns were added to it: a part file of an
        earlier version with one of them is read (its rows resume) with the added columns
        empty; any other header still stops the run (:class:`.store.ResultStore`).
    """

    name: str
    columns: Tuple[str, ...]
    key: Tuple[str, ...]
    figure: str
    summary: str
    plot: str
    command: str = "tpcstudy emulate ..."
    sniff: Tuple[str, ...] = ()
    required: Tuple[str, ...] = ()
    numeric: Tuple[str, ...] = ()
    previous: Tuple[Tuple[str, ...], ...] = ()

    @property
    def emulated(self) -> bool:
        """``True`` for the emulator's kinds (a folder with ``summary.csv`` and verdicts)."""
        return self.name.startswith(EMULATE_PREFIX)

    @property
    def summary_module(self) -> Any:
        """The module holding the summary (a study kind's: ``summarize``, ``format_summary``)."""
        return importlib.import_module(self.summary.partition(":")[0])

    def summary_function(self) -> Callable[..., str]:
        mod, _, name = self.summary.partition(":")
        return getattr(importlib.import_module(mod), name)

    def plot_function(self) -> Callable[..., Any]:
        mod, _, name = self.plot.partition(":")
        return getattr(importlib.import_module(mod), name)


def _k(name: str, columns: str, key: str, figure: str, summary: str, plot: str,
       command: str = "tpcstudy emulate ...", previous: Tuple[str, ...] = (), **kw: Any) -> Kind:
    return Kind(name, tuple(columns.split()), tuple(key.split()), figure, summary, plot, command,
                previous=tuple(tuple(p.split()) for p in previous),
                **{k: tuple(v.split()) for k, v in kw.items()})


_S, _E, _P = "tpcstudy.study.", "tpcstudy.emulate.experiments.", "tpcstudy.plotting."
_STATS = ("name source nodes links raw_links pruned_nodes pruned_links edge_routers core_routers "
          "min_degree max_degree mean_degree capacity_known_links capacity_coverage "
          "capacity_rule weight_rule")
_POLICIES = ("scenario heavy seed draw policy pairs paths k lp_value lp_equal offered goodput "
             "goodput_lp transfers completed fct_median fct_p90 fct_p99 jain slot_share moves "
             "lp_unplaced load mean_bytes shape aborted subflows_joined flows mmr std_mbps "
             "avgt_mbps burst_share on_idle counts fcts link_mbps warmup seconds drain cpu_busy "
             "status error")

_ALL = (
    _k("topo", _STATS, "name", "fig5-topologies", _S + "stats:summary_line",
       _P + "topologies:plot_topologies", "tpcstudy topo stats ...", sniff="pruned_nodes pruned_links"),
    _k("maxflow",
       "topology heavy seed model k subflows pairs value improvement improvement_over_multipath "
       "used_paths_max iterations columns gap seconds seconds_paths seconds_pricing seconds_lp "
       "nodes links edge_routers status error",
       "topology heavy seed model k subflows", "fig6-maxflow",
       _S + "maxflow_summary:summary_line", _P + "maxflow:plot_maxflow",
       "tpcstudy maxflow ...", sniff="model improvement",
       numeric="heavy seed k subflows pairs value improvement improvement_over_multipath gap"),
    _k("disjoint",
       "topology method k failure nodes links edge_routers pairs mean_paths min_paths max_paths "
       "survive_share overlap_share backup_share failure_kind default_hit_share stranded_share "
       "disconnected seconds status error",
       "topology method k failure", "fig7-disjoint", _S + "disjoint:summary_line",
       _P + "disjoint:plot_disjoint", "tpcstudy disjoint ...", sniff="method mean_paths",
       numeric="k pairs mean_paths min_paths max_paths survive_share default_hit_share "
               "stranded_share disconnected",
       previous=("topology method k nodes links edge_routers pairs mean_paths min_paths "
                 "max_paths survive_share overlap_share backup_share seconds status error",)),
    _k("mlu",
       "topology matrix seed model k demands volume mlu lambda reduction lp_mlu gap bound "
       "gap_bound columns iterations seconds nodes links status error",
       "topology seed model k", "mlu", _S + "mlu:summary_line", _P + "mlu:plot_mlu",
       "tpcstudy mlu ...", sniff="model mlu reduction",
       required="topology seed model k mlu",
       numeric="seed k mlu lambda reduction gap bound volume demands"),
    _k("failures",
       "topology objective heavy seed model k failure reaction pairs value intact retained "
       "lost_share disconnected dual_bound gap columns iterations warm seconds nodes links "
       "failed_links status error",
       "topology failure heavy seed model k reaction", "failures",
       _S + "failures:summary_line", _P + "failures:plot_failures",
       "tpcstudy maxflow --failures ...", sniff="failure reaction retained",
       numeric="seed pairs value intact retained lost_share disconnected"),
    _k("emulate-throughput",
       "scenario heavy seed draw model k pairs served_pairs connections paths max_segments "
       "lp_value measured ratio ceiling data_share lp_gain measured_gain lp_solution link_mbps "
       "queue_ms warmup seconds failed_connections starved_connections retransmits cpu_busy "
       "routers links status error subflows_joined subflows_expected subflows_stale "
       "mptcp_reinjected attempt predicted_cpu settings",
       "scenario heavy seed draw model", "emulation-throughput",
       _E + "throughput:summary_line", _P + "emulation:plot_throughput"),
    _k("emulate-failover",
       "scenario run draw strategy param seed source destination failed_link slots recovery_s "
       "moved_s moves rto_ms link_mbps pacing_mbps fail_after restore_after status error",
       "scenario run draw strategy", "emulation-recovery", _E + "failover:summary_line",
       _P + "emulation:plot_recovery"),
    _k("emulate-failures",
       "scenario reaction draw heavy seed cut at connections hit recovered lost "
       "recovery_median_s recovery_p99_s recovery_s goodput_before goodput_2s lp_intact "
       "lp_reoptimised ratio_2s series igp_ms detect_ms control_ms compute_ms push_ms swap_ms "
       "pushed agent_counters stalls mtu payload_intact payload_failed link_mbps cpu_busy status "
       "error rto_min_ms retrans tcp_ext",
       "scenario reaction draw", "emulation-failures", _E + "failures:summary_line",
       _P + "emulation_failures:plot_failure_experiment"),
    _k("emulate-mptcp",
       "scenario paths hosts subflows seed draw lp_value model_value measured ratio jain joined "
       "expected_joins link_mbps seconds cpu_busy per_host path_use",
       "scenario paths hosts subflows seed draw", "emulation-mptcp",
       _E + "semper:summary_line", _P + "emulation:plot_dumbbell"),
    _k("emulate-fault",
       "scenario strategy second total jain failed per_host path_use paths hosts subflows "
       "timeout_ms fail_after link_mbps seed draw",
       "scenario strategy seed draw second", "emulation-fault",
       _E + "semper:fault_summary_line", _P + "emulation:plot_fault"),
    _k("emulate-policies", _POLICIES, "scenario heavy seed draw policy", "emulation-policies",
       _E + "policies:summary_line", _P + "emulation:plot_policies"),
    _k("emulate-verify",
       "check draw source destination prefix slot waypoints segments probes delivered dag_arcs "
       "arcs_crossed off_dag_arcs variant map value_size entries loaded identical status error",
       "check draw source prefix slot variant", "emulation-verify",
       _E + "verify:summary_line", _P + "emulation:plot_verify"),
)

#: Every results kind by name, in the order above.
KINDS: Dict[str, Kind] = {k.name: k for k in _ALL}


def kind(name: Optional[str]) -> Kind:
    """The kind named ``name``.

    Raises
    ------
    UsageError
        No such kind (the message lists them).
    """
    if name not in KINDS:
        raise UsageError(f"unknown result kind {name!r}; choose from {', '.join(KINDS)}")
    return KINDS[str(name)]
