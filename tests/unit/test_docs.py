"""Meta-tests: every hook is documented with its exact signature and exercised by a test."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from svc_host import hookspecs

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
def test_hook_has_a_docstring_with_an_example(hook: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
    assert "Example::" in doc
    assert "@hookimpl" in doc


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_exercised_by_a_test(hook: str) -> None:
    tests = [p for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_docs.py"]
    assert any(hook in path.read_text() for path in tests), f"no test mentions {hook}"
