"""Meta-tests: every hook is documented with its exact signature and exercised by a test."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from svc_host.plugin_core import specs as hookspecs

ROOT = Path(__file__).resolve().parents[2]
HOOKS = sorted(name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("svc_"))


def signature(name: str) -> str:
    text = str(inspect.signature(getattr(hookspecs, name))).replace("'", "")
    return f"{name}{text}"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented_with_its_signature(hook: str) -> None:
    doc = (ROOT / "docs" / "plugins" / "hooks.md").read_text()
    assert f"## `{signature(hook)}`" in doc


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_reference_says_when_it_fires(hook: str) -> None:
    doc = (ROOT / "docs" / "plugins" / "hooks.md").read_text()
    section = doc.split(f"## `{signature(hook)}`", 1)[1].split("\n## ", 1)[0]
    assert "**Fires**" in section, f"docs/plugins/hooks.md does not say when {hook} fires"


def test_every_documented_hook_exists() -> None:
    doc = (ROOT / "docs" / "plugins" / "hooks.md").read_text()
    documented = {line.split("`")[1].split("(")[0] for line in doc.splitlines() if line.startswith("## `svc_")}
    assert documented == set(HOOKS)


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_docstring_with_an_example(hook: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
    assert "Example::" in doc
    assert "@hookimpl" in doc


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_exercised_by_a_test(hook: str) -> None:
    tests = [p for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_docs.py"]
    tests += list((ROOT / "plugins").glob("*/tests/**/test_*.py"))
    assert any(hook in path.read_text() for path in tests), f"no test mentions {hook}"
