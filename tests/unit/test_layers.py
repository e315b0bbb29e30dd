"""Imports point one way at run time: the domain, the pure Slurm layer and the store below, the services (monitor,
leases, engine, sweeps, schedules, the ``Host``) above them, and the interfaces (REST, MCP, CLI) on top.

Imports under ``if TYPE_CHECKING:`` are left out: they are annotations only (the engine names the ``Host`` that
owns it) and never run.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "svc_host"
BELOW = {"domain", "slurm", "store", "errors", "paths", "plugin_types"}
INTERFACES = {"api", "mcp", "cli", "testing", "__main__"}


def unit(module: str) -> str:
    """The top-level part of ``svc_host`` a module belongs to (``svc_host.store.jobs`` -> ``store``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def runtime_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("svc_host"):
            found.add(node.module or "")
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("svc_host"))
    return found


@functools.cache
def edges() -> list[tuple[str, str]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        found += [(module, target) for target in sorted(runtime_imports(path)) if unit(target) != unit(module)]
    return found


def test_the_lower_layers_import_nothing_above_them() -> None:
    wrong = [
        f"{source} -> {target}" for source, target in edges() if unit(source) in BELOW and unit(target) not in BELOW
    ]
    assert wrong == []


def test_nothing_below_the_interfaces_imports_one() -> None:
    wrong = [
        f"{source} -> {target}"
        for source, target in edges()
        if unit(source) not in INTERFACES and unit(target) in INTERFACES
    ]
    assert wrong == []


def test_no_two_parts_import_each_other() -> None:
    graph: dict[str, set[str]] = {}
    for source, target in edges():
        graph.setdefault(unit(source), set()).add(unit(target))
    cycles = sorted(f"{a} <-> {b}" for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, ()))
    assert cycles == []
