"""docs/plugins/README.md (the guide) works as written: its settings model runs, and every field or property the
guide's other snippets read from it is one the model has (the guide once read ``site.charged_account``, which only
the example plugin defined)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from svc_host.plugin import ConfigError

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugins" / "README.md"


def python_snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)


def settings_model() -> Any:
    [snippet] = [text for text in python_snippets() if "class SiteSettings" in text]
    namespace: dict[str, Any] = {}
    exec(compile(snippet, str(GUIDE), "exec"), namespace)  # noqa: S102 - the guide's own code, run as a reader would
    return namespace["SiteSettings"]


def test_every_setting_the_guide_reads_is_on_its_model() -> None:
    model = settings_model()
    read = set()
    for snippet in python_snippets():
        read |= set(re.findall(r"\b(?:site|settings|SiteSettings\))\.(\w+)\b", snippet))
    read -= {"py"}  # settings.py, a module name in a comment
    assert read, "the guide's snippets read no setting: the test would check nothing"
    missing = sorted(name for name in read if name not in model.model_fields and not hasattr(model, name))
    assert not missing, f"the guide reads settings its SiteSettings does not have: {missing}"


def test_the_guides_model_refuses_use_until_configured() -> None:
    model = settings_model()
    unset = model()
    with pytest.raises(ConfigError, match="the site is not configured"):
        unset.require()
    with pytest.raises(ConfigError, match=r"set plugins\.site\.account"):
        _ = unset.charged_account
    assert model(login="me@login.example", account="proj").charged_account == "proj"


def every_snippet() -> list[tuple[str, str]]:
    """(file, snippet) for every Python snippet of docs/plugins."""
    return [
        (path.name, snippet)
        for path in sorted(GUIDE.parent.glob("*.md"))
        for snippet in re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)
    ]


def test_every_snippet_parses_and_imports_only_what_svc_offers_plugins() -> None:
    """Each snippet is Python (``...`` for what it leaves out), and what it imports from svc is a name svc's door
    (``svc_host.plugin``) or its test helpers (``svc_host.testing``) really has."""
    snippets = every_snippet()
    assert len(snippets) > 10
    wrong = []
    for name, snippet in snippets:
        for node in ast.walk(ast.parse(snippet, filename=name)):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("svc_host"):
                continue
            module = str(node.module)
            if module != "svc_host.plugin" and not module.startswith("svc_host.testing"):
                wrong.append(f"{name}: imports {module}, not svc_host.plugin")
                continue
            imported = importlib.import_module(module)
            wrong += [f"{name}: {module} has no {a.name}" for a in node.names if not hasattr(imported, a.name)]
    assert not wrong, wrong
