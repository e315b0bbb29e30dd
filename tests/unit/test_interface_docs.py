"""docs/interfaces.md says what the code does: the MCP tools `svc mcp` serves, the `SVC_*` variables each face
reads, and every REST route's declared errors (read from the code, never listed here by hand)."""

from __future__ import annotations

import ast
import os
import re
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from svc_host.api.app import create_app
from svc_host.host import Host
from svc_host.mcp.server import create_server
from svc_host.plugin_core.manager import PluginManager
from svc_host.settings.config import ENV_NESTED_DELIMITER, ENV_PREFIX
from svc_host.testing.http import security_for_tests

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "interfaces.md"
CODE = [ROOT / "svc_host", ROOT / "svc_plugin_local", ROOT / "svc_plugin_ssh", ROOT / "svc_plugin_rsync"]
CODE += [path for path in (ROOT / "plugins").glob("*/svc_*") if path.is_dir()]
MODULE_ATTRIBUTES = {"SVC_PLUGIN_API", "SVC_DELIVERS"}
"""Names a plugin module declares (docs/plugins/api.md), not environment variables."""


def doc() -> str:
    return DOC.read_text()


@pytest.fixture
def svc_plugins(svc_plugin_manager: PluginManager) -> PluginManager:
    """The plugins the `svc` distribution installs (its entry points), as `svc mcp` and `svc serve` load them."""
    for entry in entry_points(group="svc"):
        if entry.dist is not None and entry.dist.name == "svc":
            svc_plugin_manager.register(entry.load(), entry.name)
    return svc_plugin_manager


# -- MCP tools ------------------------------------------------------------------------------------------------


async def served_tools(host: Host) -> list[str]:
    async with Client(create_server(host)) as client:
        return sorted(tool.name for tool in (await client.list_tools()).tools)


async def test_the_tool_count_and_names_are_those_svc_mcp_serves(svc_plugins: PluginManager, svc_host: Host) -> None:
    tools = await served_tools(svc_host)
    stated = re.search(r"`svc mcp` serves (\d+) tools: ((?:`\w+`(?:, | and )?)+)", " ".join(doc().split()))
    assert stated is not None, "docs/interfaces.md does not say which tools `svc mcp` serves"
    assert int(stated[1]) == len(tools)
    assert sorted(re.findall(r"`(\w+)`", stated[2])) == tools
    counts = {int(n) for n in re.findall(r"(?<!spec lists )\b(\d+) (?:MCP )?tools\b", doc())}
    assert counts == {len(tools)}, f"docs/interfaces.md gives other tool counts: {counts - {len(tools)}}"


# -- environment variables ------------------------------------------------------------------------------------


def variables_in_code() -> set[str]:
    """Every ``SVC_*`` name the code spells out as a string: the variables it reads."""
    found: set[str] = set()
    for root in CODE:
        for path in root.rglob("*.py"):
            if "tests" in path.relative_to(root).parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found.update(re.findall(r"^SVC_[A-Z0-9_]+$", node.value))
    return found - MODULE_ATTRIBUTES


def variable_table() -> dict[str, str]:
    """The rows of the doc's environment table: variable -> the faces that read it."""
    section = doc().split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(SVC_[A-Z0-9_<>]+)` \| ([^|]+) \|", section, flags=re.MULTILINE)
    return dict(rows)


def test_every_variable_the_code_reads_is_in_the_table() -> None:
    table = variable_table()
    family = f"{ENV_PREFIX}<SECTION>{ENV_NESTED_DELIMITER}<KEY>"
    assert family in table, "the configuration's SVC_<SECTION>__<KEY> variables are not documented"
    missing = {
        name for name in variables_in_code() if name not in table and ENV_NESTED_DELIMITER not in name
    }  # a nested name belongs to the family
    assert not missing, f"read by the code, not in docs/interfaces.md's table: {sorted(missing)}"
    assert not set(table) - variables_in_code() - {family}, "the table lists variables nothing reads"


def test_the_doc_never_says_a_face_reads_no_svc_variable() -> None:
    claims = re.findall(r"(?:never reads|reads no|reads neither)[^.]*`?SVC_\*", doc().replace("\n", " "))
    assert not claims, claims


class RecordingEnviron(type(os.environ)):  # type: ignore[misc]
    """``os.environ`` that notes every ``SVC_*`` name looked up while unset (a lookup, not an iteration)."""

    looked_up: set[str]

    def __getitem__(self, key: str) -> str:
        try:
            value: str = super().__getitem__(key)
            return value
        except KeyError:
            if key.startswith("SVC_"):
                self.looked_up.add(key)
            raise


@pytest.fixture
def recording_environ(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    environ = os.environ
    recording = RecordingEnviron(
        environ._data,  # type: ignore[attr-defined]
        environ.encodekey,
        environ.decodekey,
        environ.encodevalue,
        environ.decodevalue,
    )
    recording.looked_up = set()
    for key in [key for key in environ if key.startswith("SVC_")]:
        monkeypatch.delenv(key)
    monkeypatch.setattr(os, "environ", recording)
    return recording.looked_up


@pytest.mark.usefixtures("svc_isolated_home")
async def test_the_variables_svc_mcp_reads_are_documented_for_it(recording_environ: set[str]) -> None:
    """`svc mcp` as a user starts it: the Host from the environment, the tool list, a tool call."""
    from svc_host.plugin_core.manager import get_plugin_manager

    get_plugin_manager.cache_clear()
    try:
        async with Client(create_server()) as client:
            answer: Any = (await client.call_tool("get_config", {})).structured_content
    finally:
        get_plugin_manager.cache_clear()
    assert answer is not None
    assert answer["success"], answer
    assert recording_environ, "svc mcp read no SVC_* variable: the test no longer sees its lookups"
    table = variable_table()
    undocumented = sorted(name for name in recording_environ if "svc mcp" not in table.get(name, ""))
    assert not undocumented, f"svc mcp reads these, docs/interfaces.md does not say so: {undocumented}"


# -- declared errors ------------------------------------------------------------------------------------------


def declared_errors(operation: dict[str, Any]) -> dict[str, str]:
    """An operation's error statuses declared with ``responses=`` (the ``{detail}`` body's schema), not the 422 of
    FastAPI's own validation nor the 401 the app adds to every token-protected route."""
    found = {}
    for code, response in operation["responses"].items():
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        if code[0] in "45" and schema.get("$ref", "").endswith("ErrorBody"):
            found[code] = schema["$ref"]
    return found


def test_every_api_route_declares_a_4xx_with_the_error_body(svc_plugins: PluginManager, svc_host: Host) -> None:
    paths = create_app(svc_host, security=security_for_tests()).openapi()["paths"]
    operations = [
        (method, path, op) for path, ops in paths.items() if path.startswith("/api/") for method, op in ops.items()
    ]
    assert len(operations) > 50
    undeclared = [
        f"{method.upper()} {path}"
        for method, path, operation in operations
        if not any(code.startswith("4") for code in declared_errors(operation))
    ]
    assert not undeclared, f"routes with no declared 4xx (responses=error_responses(...)): {undeclared}"
    bodiless = [
        f"{method.upper()} {path} {code}"
        for method, path, operation in operations
        for code, response in operation["responses"].items()
        if code[0] in "45" and code not in ("401", "422") and code not in declared_errors(operation)
    ]
    assert not bodiless, f"errors declared without the {{detail}} body: {bodiless}"
