"""docs/plugins (the guide and the API page) works as written: every Python snippet runs, in order, as a reader
assembles them; the hooks, transport factory, renderer and usage function they define answer as the guide says; its
settings model runs, and every field or property the guide's other snippets read from it is one the model has (the
guide once read ``site.charged_account``, which only the example plugin defined)."""

from __future__ import annotations
import __future__

import ast
import importlib
import re
from pathlib import Path
from types import SimpleNamespace
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


# -- every snippet runs ---------------------------------------------------------------------------------------------


def run_snippets(path: Path) -> dict[str, Any]:
    """Every Python snippet of one page, run in order in one namespace, as a reader assembles them: each compiled as
    the example's files are (``from __future__ import annotations``), a name a snippet leaves to an earlier one
    (``SiteSettings``, ``site_usage``) found there, what a snippet imports imported for real (the example plugin's
    modules included)."""
    namespace: dict[str, Any] = {"__name__": f"docs_{path.stem.lower()}"}
    for snippet in re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL):
        code = compile(snippet, str(path), "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
        exec(code, namespace)  # noqa: S102 - the docs' own code, run as a reader would
    return namespace


def configured(**fields: str) -> SimpleNamespace:
    """A ``PluginHost`` as far as the guide's code asks: its site settings (empty: not configured)."""
    return SimpleNamespace(plugin_settings=lambda name, model: model(**fields))


@pytest.fixture(scope="module")
def guide() -> dict[str, Any]:
    return run_snippets(GUIDE)


def test_every_page_with_python_runs_as_written() -> None:
    pages = [path for path in sorted(GUIDE.parent.glob("*.md")) if "```python" in path.read_text()]
    assert GUIDE in pages
    assert len(pages) >= 2
    for path in pages:
        assert run_snippets(path)


def test_the_guides_hooks_answer_as_the_guide_says(guide: dict[str, Any]) -> None:
    from svc_example_site.settings import SiteSettings

    from svc_host.plugin import RendererSpec, ToolSpec, TransportSpec

    assert guide["SVC_PLUGIN_API"] == ">=1.1,<2"
    assert guide["svc_settings"]() is SiteSettings
    [transport] = guide["svc_transports"]()
    assert isinstance(transport, TransportSpec)
    assert transport.name == "site"
    assert transport.remote
    [renderer] = guide["svc_renderers"]()
    assert isinstance(renderer, RendererSpec)
    assert renderer.name == "site"
    [tool] = guide["svc_mcp_tools"]()
    assert isinstance(tool, ToolSpec)
    assert tool.name == "site_account_usage"
    assert tool.read_only
    [router] = guide["svc_api_routers"]()
    assert [route.path for route in router.routes] == ["/api/site/account"]
    [command] = guide["svc_cli_commands"]()
    assert command.name == "site"
    assert [p.name for p in command.params] == ["as_json"]


def test_the_guides_transport_is_refused_until_configured_then_made(guide: dict[str, Any]) -> None:
    from svc_example_site.transport import SiteTransport

    with pytest.raises(ConfigError, match="the site is not configured"):
        guide["make_transport"](host=configured())
    made = guide["make_transport"](host=configured(login="me@login.example", account="proj"))
    assert isinstance(made, SiteTransport)
    guide_transport = guide["SiteTransport"](lambda: guide["SiteSettings"](login="me@login.example", account="p"))
    assert guide_transport.name == "site"  # the guide's class implements every abstract method of SlurmTransport


def test_the_guides_renderer_puts_the_account_after_the_shebang(guide: dict[str, Any]) -> None:
    from svc_host.plugin import JobDefinition, SvcConfig

    config = SvcConfig(plugins={"site": {"login": "me@login.example", "account": "proj", "qos": "long"}})
    script = guide["render_for_site"](JobDefinition(name="train", command="python train.py"), config=config)
    lines = script.text.splitlines()
    assert lines[0].startswith("#!")
    assert lines[1:3] == ["#SBATCH --account=proj", "#SBATCH --qos=long"]
    assert "python train.py" in lines


async def test_the_guides_usage_says_what_to_set_before_anything_runs(guide: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"set plugins\.site\.account"):
        await guide["site_usage"](configured())
