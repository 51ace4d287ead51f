"""The package's layering, read from the source (AST): every import between tpcstudy's units goes
down the order stated in docs/architecture.md, and no module imports the public facade
(``src/tpcstudy/__init__.py``) instead of the module that defines a name. A new edge that breaks the
order fails here, so the layering sentence cannot go stale."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "tpcstudy"

#: Units in order: a unit may import only units of an earlier layer (docs/architecture.md).
LAYERS: List[Tuple[str, ...]] = [
    ("_version", "errors", "_core", "metrics", "linux"),
    ("rules",),
    ("topology",),
    ("io", "paths"),
    ("subflows", "pairs", "topogen", "lp", "policies"),
    ("maxflow",),
    ("mlu",),
    ("unsplit", "demands", "failures"),
    ("export",),
    ("hostagent",),
    ("study",),
    ("emulate.network",),
    ("emulate.agent",),
    ("emulate.experiments",),
    ("emulate",),
    ("plotting",),
    ("cli",),
    ("__main__",),
]
RANK = {u: i for i, layer in enumerate(LAYERS) for u in layer}


def _unit(module: str) -> str:
    """``tpcstudy.emulate.agent.child`` -> ``emulate.agent``; ``tpcstudy.io.gml`` -> ``io``."""
    parts = module.split(".")[1:]
    if parts[0] == "emulate" and len(parts) > 1 and parts[1] in ("network", "agent",
                                                                 "experiments"):
        return ".".join(parts[:2])
    return parts[0]


def _modules() -> Dict[str, Path]:
    out = {}
    for f in sorted(ROOT.rglob("*.py")):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _imports(module: str, path: Path) -> List[Tuple[int, str, List[str]]]:
    """``(line, imported module, names)`` of every tpcstudy import of ``module``."""
    is_pkg = path.name == "__init__.py"
    package = module.split(".") if is_pkg else module.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "tpcstudy":
                out.append((node.lineno, target, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names
                    if a.name.split(".")[0] == "tpcstudy"]
    return out


def _edges() -> Dict[Tuple[str, str], List[str]]:
    mods = _modules()
    edges: Dict[Tuple[str, str], List[str]] = {}
    for module, path in mods.items():
        if module == "tpcstudy":
            continue  # the facade re-exports everything, lazily
        src = _unit(module)
        for line, target, names in _imports(module, path):
            targets = [f"{target}.{n}" for n in names] if target == "tpcstudy" else [target]
            for t in targets:
                dst = _unit(t)
                if dst != src:
                    edges.setdefault((src, dst), []).append(f"{path.relative_to(ROOT.parent)}:"
                                                            f"{line}")
    return edges


def test_every_unit_has_a_layer():
    units = {_unit(m) for m in _modules() if m != "tpcstudy"}
    assert units <= set(RANK), f"units without a layer: {sorted(units - set(RANK))}"


def test_imports_go_down_the_layers():
    wrong = {f"{a} -> {b}": where[:3] for (a, b), where in _edges().items()
             if RANK[b] >= RANK[a]}
    assert not wrong, wrong


def test_no_module_imports_the_facade():
    """``from .. import max_flow`` inside the package loads the whole library through
    ``src/tpcstudy/__init__.py`` and hides the real dependency: import from the defining module
    (a subpackage by name is fine: ``from .. import plotting``)."""
    mods = _modules()
    bad: Set[str] = set()
    for module, path in mods.items():
        if module == "tpcstudy":
            continue
        for line, target, names in _imports(module, path):
            if target == "tpcstudy":
                bad.update(f"{path.relative_to(ROOT.parent)}:{line} {n}" for n in names
                           if f"tpcstudy.{n}" not in mods and n != "_core")
    assert not bad, sorted(bad)


@pytest.mark.parametrize("role", ["receiver", "sender", "sender with policies and queues"])
def test_the_agent_process_imports_a_dozen_modules(role):
    """The traffic agent's process (``python -m tpcstudy.emulate.agent``) imports the protocol,
    its role, the kernel plumbing and, when its job needs them, the policy it runs and the
    netlink reader: not the library (about 60 modules, the C++ core, numpy's LP solvers)."""
    import subprocess
    import sys

    code = ("import sys; import tpcstudy.emulate.agent.child as c\n"
            "if 'policies' in sys.argv[1]:\n"
            "    from tpcstudy.policies import make_policy\n"
            "    make_policy('exp3:0.1', {'b': 2})\n"
            "    import tpcstudy.emulate.network.netlink\n"
            "print(sorted(m for m in sys.modules if m.startswith('tpcstudy')))")
    out = subprocess.run([sys.executable, "-c", code, role], capture_output=True, text=True,
                         check=True).stdout
    loaded = ast.literal_eval(out.strip())
    assert "tpcstudy._core" not in loaded and "tpcstudy.maxflow" not in loaded
    assert not [m for m in loaded if m.startswith(("tpcstudy.study", "tpcstudy.export",
                                                   "tpcstudy.emulate.experiments"))]
    assert len(loaded) <= (16 if "policies" in role else 12), loaded
