"""The house's plan, held against the code: every import counts (module level, inside functions, under
``TYPE_CHECKING``), so what the plan forbids cannot hide behind a lazy or a typing-only import.

- svc_host's wings sit on floors (``FLOORS``); a file imports only from its own wing or a lower floor.
- No two files import each other, directly or round a longer circle.
- The plugins in this repository import svc only through its front door: ``svc_host.plugin`` (and
  ``svc_host.testing`` in their tests, plugins/*/tests included).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOST = REPO / "svc_host"

FLOORS: dict[str, int] = {
    # pure: the error family, async building blocks, models, Slurm's formats
    "errors": 0,
    "concurrency": 1,
    "domain": 1,
    "slurm": 2,
    # where things are kept
    "settings": 3,
    "store": 3,
    # the contracts plugins implement, then the plugin machinery
    "transports": 4,
    "plugin_core": 5,
    "__init__": 6,
    "rendering": 6,
    # what runs while svc runs
    "runtime": 7,
    # what svc does
    "workflows": 8,
    "sweeps": 9,
    "services": 10,
    "sessions": 11,  # above services: a session's job goes through the one submit service
    "schedules": 11,
    # assembly
    "host": 12,
    # the faces
    "api": 13,
    "agent": 13,
    "mcp": 14,
    "cli": 15,
    "plugin": 16,
    "testing": 16,
    "web": 16,
    "__main__": 17,
}
"""A wing imports only its own files and lower floors. The CLI sits above the faces it starts (``svc serve``,
``svc mcp``, the agent); the test helpers above what they test."""

PLUGIN_TREES = [
    "svc_plugin_local",
    "svc_plugin_ssh",
    "svc_plugin_rsync",
    "svc_plugin_sessions",
    *(str(path.relative_to(REPO)) for path in sorted((REPO / "plugins").glob("*/svc_*"))),
]


def module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


@functools.cache
def host_modules() -> dict[str, Path]:
    return {module_name(path, REPO): path for path in HOST.rglob("*.py")}


def imported(path: Path, package: str) -> set[str]:
    """Every module ``path`` imports, at any place in the file; ``from a import b`` counts as ``a.b`` when that is a
    module of svc_host."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in host_modules() else base)
    return found


@functools.cache
def host_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in host_modules().items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges[module] = {target for target in imported(path, package) if target in host_modules() and target != module}
    return edges


def wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_wing_has_a_floor() -> None:
    assert sorted({wing(module) for module in host_modules()} - set(FLOORS)) == []


def test_imports_point_down() -> None:
    upward = sorted(
        f"{source} -> {target}"
        for source, targets in host_edges().items()
        for target in targets
        if wing(source) != wing(target) and FLOORS[wing(target)] >= FLOORS[wing(source)]
    )
    assert upward == []


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_between_files() -> None:
    assert circles(host_edges()) == []


def test_no_import_circle_in_the_plugins() -> None:
    for tree in PLUGIN_TREES:
        root = (REPO / tree).parent
        modules = {module_name(path, root): path for path in (REPO / tree).rglob("*.py")}
        edges = {
            module: {
                target
                for target in imported(path, module if path.name == "__init__.py" else module.rpartition(".")[0])
                if target in modules and target != module
            }
            for module, path in modules.items()
        }
        assert circles(edges) == [], tree


PLUGIN_TEST_TREES = [str(path.relative_to(REPO)) for path in sorted((REPO / "plugins").glob("*/tests"))]
"""The tests of the plugins in this repository: like a third party's, they import only svc's two doors."""


def plugin_imports(tree: str) -> list[str]:
    found = []
    for path in sorted((REPO / tree).rglob("*.py")):
        in_tests = "tests" in path.relative_to(REPO).parts or path.name == "conftest.py"
        allowed = ("svc_host.plugin", "svc_host.testing") if in_tests else ("svc_host.plugin",)
        for target in imported(path, module_name(path, REPO / tree).rpartition(".")[0]):
            if target.split(".")[0] == "svc_host" and not any(
                target == door or target.startswith(door + ".") for door in allowed
            ):
                found.append(f"{path.relative_to(REPO)} imports {target}")
    return found


def test_the_plugins_here_import_svc_only_through_its_front_door() -> None:
    assert [line for tree in PLUGIN_TREES for line in plugin_imports(tree)] == []


def test_the_plugins_tests_here_import_svc_only_through_its_two_doors() -> None:
    assert PLUGIN_TEST_TREES, "no plugin tests found under plugins/*/tests: the test would check nothing"
    assert [line for tree in PLUGIN_TEST_TREES for line in plugin_imports(tree)] == []


def test_no_plugin_imports_another() -> None:
    packages = {Path(tree).name for tree in PLUGIN_TREES}
    crossing = [
        f"{path.relative_to(REPO)} imports {target}"
        for tree in PLUGIN_TREES
        for path in sorted((REPO / tree).rglob("*.py"))
        for target in imported(path, "")
        if target.split(".")[0] in packages - {Path(tree).name}
    ]
    assert crossing == []
