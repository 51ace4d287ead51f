"""``tpcstudy emulate ACTION``: one parser per action (only its options, its defaults), values
checked at parse time, options of another kind of run refused; no root needed."""

from __future__ import annotations

import pytest

from tpcstudy.cli import build_parser, main
from tpcstudy.cli.emulate import ACTIONS, with_default_action


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(["emulate", *argv, "--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


def _refused(capsys, *argv: str) -> str:
    """The exit status 2 and the message of a refused command line."""
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse
        code = e.code
    assert code == 2, argv
    return capsys.readouterr().err


def test_each_action_lists_only_its_options(capsys):
    pol = _help(capsys, "policies")
    for own in ("--policies", "--load", "--mean-kb", "--paths", "--flows", "--phase"):
        assert own in pol
    for other in ("--models", "--table", "--runs", "--rto-count", "--equal-paths",
                  "--subflows", "--dry-run", "--connections", "--probes"):
        assert other not in pol, other
    thr = _help(capsys, "throughput")
    assert "--models" in thr and "--dry-run" in thr and "--policies" not in thr
    assert "--runs" not in thr and "--table" not in thr
    fo = _help(capsys, "failover")
    assert "--rto-count" in fo and "--heavy" not in fo and "--models" not in fo
    fault = _help(capsys, "fault")
    assert "seconds before path 1 fails (default 5)" in fault  # not failover's 2
    assert "--equal-paths" in fault and "--paths" not in fault.replace("--equal-paths", "")
    top = _help(capsys)
    assert all(a in top for a in ACTIONS)


def test_defaults_are_in_the_parser():
    p = build_parser()
    a = p.parse_args(["emulate", "fault"])
    assert a.fail_after == 5.0 and a.equal_paths == 3 and a.subflows == 4 and a.hosts == 3
    a = p.parse_args(["emulate", "failover", "--topo", "x"])
    assert a.fail_after == 2.0 and a.runs == 20 and a.rto_count == 3
    a = p.parse_args(["emulate", "throughput", "--topo", "x"])
    assert a.seconds is None and a.warmup is None and a.models == "ecmp,sr" and a.k == 4
    assert a.link_mbps == "auto" and a.cpu_budget == 0.6 and not a.no_cpu_retry
    assert p.parse_args(["emulate", "throughput", "--link-mbps", "2.5"]).link_mbps == 2.5
    assert p.parse_args(["emulate", "verify", "--topo", "x", "--table", "t"]).link_mbps == 10.0
    a = p.parse_args(["emulate", "dumbbell"])
    assert a.equal_paths == "2,4,8" and a.subflows == "1,2,4,8" and a.hosts == 4


def test_no_action_means_throughput():
    assert with_default_action(["emulate", "--topo", "x"]) == ["emulate", "throughput", "--topo",
                                                                "x"]
    assert with_default_action(["emulate", "verify", "--topo", "x"])[1] == "verify"
    assert with_default_action(["emulate", "--help"]) == ["emulate", "--help"]
    assert build_parser().parse_args(with_default_action(
        ["emulate", "--scenario", "six-paths"])).action == "throughput"


@pytest.mark.parametrize("argv,words", [
    (["emulate", "--topo", "x", "--seed", "-1"], "--seed: '-1': must be >= 0"),
    (["emulate", "--topo", "x", "--seeds", "0"], "--seeds: '0': must be >= 1"),
    (["emulate", "--topo", "x", "--solver", "cplex"], "invalid choice: 'cplex'"),
    (["emulate", "--topo", "x", "--seconds", "0"], "--seconds: '0': must be > 0"),
    (["emulate", "--topo", "x", "--connections", "0"], "--connections: '0': must be >= 1"),
    (["emulate", "--topo", "x", "--link-mbps", "nan"], "--link-mbps: 'nan': must be > 0"),
    (["emulate", "--topo", "x", "--runs", "3"], "unrecognized arguments: --runs 3"),
    (["emulate", "failover", "--topo", "x", "--heavy", "20"], "unrecognized arguments: --heavy"),
    (["emulate", "verify", "--topo", "x", "--table", "t", "--probes", "100000"],
     "--probes: '100000': must be 1 to 64"),
    (["emulate", "policies", "--scenario", "delay", "--load", "2"],
     "--load applies to --topo runs only"),
    (["emulate", "policies", "--topo", "x", "--flows", "3"],
     "--flows applies to --scenario runs only"),
    (["emulate", "policies", "--topo", "x", "--scenario", "delay"],
     "give --topo or --scenario, not both"),
    (["emulate", "fault", "--subflows", "9"], "--subflows: '9': must be 1 to 8"),
    (["emulate", "--topo", "x", "--links", "multigraph"],
     "argument --links: multigraph: the emulator joins two routers by one veth link"),
    (["emulate", "verify", "--topo", "x", "--links", "multigraph"],
     "maxflow, disjoint and export take multigraph"),
    (["emulate", "up", "--topo", "x", "--name", "n", "--nrto", "1"],
     "--policy and --nrto choose the BPF agents' slots: give --install bpf"),
    (["emulate", "up", "--topo", "x", "--name", "n", "--install", "bpf", "--policy", "fastest"],
     "fastest"),
    (["emulate", "up", "--topo", "x", "--name", "n", "--install", "bpf", "--nrto", "300"],
     "NRTOChanger's N 300: 0 (off) to 255"),
    (["emulate", "failures", "--topo", "x", "--controller-rto-count", "-1"],
     "--controller-rto-count: '-1': must be >= 0"),
])
def test_refused_values(capsys, argv, words):
    assert words in _refused(capsys, *argv)
