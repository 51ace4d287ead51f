"""The notebooks run top to bottom on their default (small) subsets: no error cell, the expected
text and at least one figure in the outputs, the figure files written.

Each notebook runs in a fresh kernel (nbclient) inside a temporary working folder, with the Zoo
installed where the product installs it (``TPCSTUDY_DATA``, inherited by the kernel)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, List

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

#: notebook -> (texts its outputs must contain, files it must write, relative to the cwd)
EXPECTED = {
    "01-topologies.ipynb": (["5 of 5 topologies non-empty after pruning", "Cogentco"],
                            ["figures/fig5-topologies.png", "figures/fig5-topologies.pdf"]),
    "02-maxflow.ipynb": (["improvement in %", "median improvement (k = 4)", "(paper: 71)",
                          "Results(kind='maxflow'"],
                         ["figures/fig6-maxflow-Abilene-Aarnet-Geant2012-Nsfnet.png",
                          "results/maxflow-Abilene-Aarnet-Geant2012-Nsfnet/results.csv"]),
    "03-disjoint.ipynb": (["greedy = max on", "Results(kind='disjoint'", "k=6"],
                          ["figures/fig7-disjoint-Abilene-Aarnet-Geant2012-Nsfnet-Cogentco.png",
                           "results/disjoint-Abilene-Aarnet-Geant2012-Nsfnet-Cogentco/results.csv"]),
    "04-export.ipynb": (["Abilene: 20 map entries", "slot 0", "Mbit/s"],
                        ["export/Abilene/paths.json", "export/Abilene/plan.json",
                         "export/path-table.png"]),
    "05-emulation.ipynb": (["the emulator can run here", "six-paths", "entries delivered on "
                            "model links 20/20", "byte-identical 5/5", "median", "on idle path",
                            "links that carried the data:", "slot 1 of the table:"],
                           ["emulation/six-paths/results.csv", "emulation/fig-throughput.png",
                            "emulation/fig-recovery.png", "emulation/failover/meta.json",
                            "emulation/fig-policies.png", "emulation/policies/results.csv"]),
}

#: Notebooks that need more than Python (skipped with the reason when this machine lacks it).
NEEDS = {"05-emulation.ipynb": "the emulator (root, iproute2, bpftool)"}


def _can_run(name: str) -> str:
    """'' when the notebook can run here, else why not."""
    if name == "05-emulation.ipynb":
        from tpcstudy.emulate.network.checks import OK, check_system

        res = check_system(bpftool=True)
        missing = [f"{k}: {v}" for k, v in res.items() if v != OK and "not required" not in k]
        if missing:
            return f"{NEEDS[name]}: " + "; ".join(missing)
    return ""


def _outputs(nb: Any) -> List[Any]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def _text(outputs: List[Any]) -> str:
    parts = []
    for o in outputs:
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            parts.append(o.data.get("text/plain", ""))
    return "\n".join(parts)


def test_every_notebook_is_tested() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs(name: str, tmp_path: Path, zoo_installed: Path) -> None:
    texts, files = EXPECTED[name]
    why = _can_run(name)
    if why:
        if os.environ.get("TPCSTUDY_EMULATE_REQUIRED") == "1":
            pytest.fail(f"{name} cannot run: {why}")
        pytest.skip(f"{name} cannot run here: {why}")
    src = NOTEBOOKS / name
    shutil.copy(src, tmp_path / name)
    nb = nbformat.read(tmp_path / name, as_version=4)
    for cell in nb.cells:  # the committed notebooks carry no outputs
        if cell.cell_type == "code":
            assert not cell.get("outputs"), f"{name}: committed with outputs"
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = _outputs(nb)
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, f"{name}: {errors[0].ename}: {errors[0].evalue}"
    text = _text(outputs)
    for t in texts:
        assert t in text, f"{name}: {t!r} not in the outputs"
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert images, f"{name}: no figure displayed"
    for f in files:
        assert (tmp_path / f).is_file(), f"{name}: {f} not written"
