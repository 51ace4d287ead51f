"""tpcstudy.study.store: the results folder (part files, results.csv, leftovers, changed
columns) and reading one back (load_results: the kind from meta.json, else from the columns)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tpcstudy.errors import InputFileError, UsageError
from tpcstudy.study import ResultStore, load_results

from helpers import (
    TASK_COLUMNS,
    TASK_KEY,
    make_disjoint,
    make_maxflow,
    make_stats,
    numbered_tasks,
    read_rows,
    run_numbered,
)


def test_leftover_temporaries_are_removed(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir(parents=True)
    junk = tmp_path / "parts" / ".T00.csv.abc.tmp"
    junk.write_text("topology,se")
    run_numbered(tmp_path, tasks=numbered_tasks(1))
    assert not junk.exists() and len(read_rows(tmp_path / "results.csv")) == 2


def test_changed_columns_refused(tmp_path: Path) -> None:
    run_numbered(tmp_path, tasks=numbered_tasks(1))
    with pytest.raises(UsageError, match="columns"):
        ResultStore(tmp_path, TASK_COLUMNS + ["extra"], TASK_KEY)
    with pytest.raises(UsageError, match="key column"):
        ResultStore(tmp_path / "x", TASK_COLUMNS, ["missing"])


def test_a_part_of_a_previous_column_list_is_read_with_the_new_cells_empty(tmp_path: Path) -> None:
    """A kind's earlier column list (Kind.previous) resumes: its rows come back in the new
    columns, the added ones empty; a header that is neither is still refused."""
    run_numbered(tmp_path, tasks=numbered_tasks(2))
    old = ResultStore(tmp_path, TASK_COLUMNS, TASK_KEY)
    rows = {tid: old.rows(tid) for tid in old.task_ids()}
    cols = TASK_COLUMNS[:1] + ["added"] + TASK_COLUMNS[1:]
    new = ResultStore(tmp_path, cols, TASK_KEY, previous=[TASK_COLUMNS + ["status", "error"]])
    assert new.task_ids() == sorted(rows)
    for tid, got in rows.items():
        assert new.rows(tid) == [{**r, "added": ""} for r in got]
        assert new.fingerprint(tid) == old.fingerprint(tid)
    with pytest.raises(UsageError, match="columns"):
        ResultStore(tmp_path, cols, TASK_KEY, previous=[TASK_COLUMNS])  # no status, error


def test_load_detects_kinds(tmp_path: Path) -> None:
    mf = load_results(make_maxflow(tmp_path / "mf"))
    dj = load_results(make_disjoint(tmp_path / "dj"))
    st = load_results(make_stats(tmp_path / "stats.csv"))
    assert (mf.kind, dj.kind, st.kind) == ("maxflow", "disjoint", "topo")
    assert mf.config["capacity"] == "uniform" and mf.seeds == [0, 1] and mf.label == "mf"
    r = next(x for x in mf if x["model"] == "multipath")
    assert r["k"] is None and isinstance(r["heavy"], float) and r["topology"] == "Alpha"
    # the same files without meta.json: told apart by their columns; results.csv directly too
    bare = make_maxflow(tmp_path / "bare", meta=False)
    assert load_results(bare).kind == "maxflow"
    assert load_results(bare / "results.csv").kind == "maxflow"
    assert load_results(tmp_path / "dj" / "meta.json").kind == "disjoint"
    # a folder holding one stats file
    make_stats(tmp_path / "statsdir" / "zoo.csv")
    assert load_results(tmp_path / "statsdir").kind == "topo"


def test_kind_recorded_in_meta_wins(tmp_path: Path) -> None:
    """A study writes its kind into meta.json; that is what a folder is read as."""
    folder = make_maxflow(tmp_path / "mf")
    meta = json.loads((folder / "meta.json").read_text())
    meta["study"]["kind"] = "disjoint"
    (folder / "meta.json").write_text(json.dumps(meta))
    assert load_results(folder).kind == "disjoint"


def test_load_errors(tmp_path: Path) -> None:
    # what is not a result is a bad input at run time (exit 1), naming it
    with pytest.raises(InputFileError, match="no such file"):
        load_results(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match="not a result folder"):
        load_results(tmp_path / "empty")
    (tmp_path / "running").mkdir()
    (tmp_path / "running" / "meta.json").write_text("{}")
    with pytest.raises(InputFileError, match="no results.csv"):
        load_results(tmp_path / "running")
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InputFileError, match="not a tpcstudy result"):
        load_results(tmp_path / "other.csv")
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(InputFileError, match="topo stats"):
        load_results(tmp_path / "x.json")
    (tmp_path / "y.json").write_text("{not json")
    with pytest.raises(InputFileError, match="y.json: not JSON"):
        load_results(tmp_path / "y.json")


def test_lock_never_follows_a_planted_link(tmp_path):
    """A link planted as ``.lock`` in a shared results folder must not make a run (as root)
    truncate and write the file it points to."""
    from tpcstudy.errors import UsageError
    from tpcstudy.study.store import folder_lock

    target = tmp_path / "precious"
    target.write_text("keep me\n")
    out = tmp_path / "results"
    out.mkdir()
    (out / ".lock").symlink_to(target)
    with pytest.raises(UsageError, match="lock"):
        with folder_lock(out):
            pass
    assert target.read_text() == "keep me\n"


@pytest.mark.parametrize("doc,words", [("[1, 2]", "a JSON object was expected"),
                                       ('{"study": "x"}', "'study' is not an object"),
                                       ('{"study": {"config": 3}}', "study.config is not"),
                                       ('{"study": {"seeds": {}}}', "study.seeds is not"),
                                       ("{nope", "unreadable meta.json")])
def test_meta_json_of_the_wrong_shape_is_named(tmp_path, doc, words):
    from tpcstudy.study.provenance import read_meta

    (tmp_path / "meta.json").write_text(doc)
    with pytest.raises(InputFileError, match=words):  # a bad file: exit 1, as the README says
        read_meta(tmp_path)


def test_an_mlu_results_file_missing_a_column_or_a_number_is_named(tmp_path: Path) -> None:
    """A results.csv from someone else: a column the summary reads missing, or an ok row's MLU
    that is no number, is an error naming the file (and line), not a KeyError or a draw left
    out without a word."""
    head = "topology,seed,model,k,mlu,lambda,reduction,status\n"
    good = "A,0,ecmp,,1.25,0.8,0.0,ok\nA,0,sr,2,0.9,1.11,28.0,ok\n"
    f = tmp_path / "r.csv"
    f.write_text(head + good)
    assert load_results(f).kind == "mlu" and len(load_results(f)) == 2
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"study": {"kind": "mlu"}}))
    (folder / "results.csv").write_text(head.replace("model,", "") + "A,0,,1.25,0.8,0.0,ok\n")
    with pytest.raises(InputFileError, match="mlu study's results.csv has no column model"):
        load_results(folder)
    f.write_text(head + good + "A,0,mcf,,abc,1.1,28.0,ok\nB,0,mcf,,,,,failed\n")
    with pytest.raises(InputFileError, match=r"r\.csv:4: column mlu: 'abc' is not a number"):
        load_results(f)
    f.write_text(head + good + "B,0,mcf,,,,,failed\nC,0,ecmp,,inf,0.0,,ok\n")
    assert len(load_results(f)) == 4  # a failed row's empty cells and inf are fine
