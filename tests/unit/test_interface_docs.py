"""docs/interfaces.md says what the code does: the MCP tools `svc mcp` serves, the `SVC_*` variables each face
reads, and every REST route's declared errors (read from the code, never listed here by hand)."""

from __future__ import annotations

import ast
import os
import re
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from svc_host.api.app import create_app
from svc_host.api.params import ErrorBody
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


async def test_the_tool_count_and_names_are_those_svc_mcp_serves(
    svc_plugins: PluginManager, svc_test_host: Host
) -> None:
    tools = await served_tools(svc_test_host)
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


def test_every_api_route_declares_a_4xx_with_the_error_body(svc_plugins: PluginManager, svc_test_host: Host) -> None:
    paths = create_app(svc_test_host, security=security_for_tests()).openapi()["paths"]
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


# -- documented statuses per route ----------------------------------------------------------------------------

METHODS = "GET|POST|PUT|PATCH|DELETE"
ROUTE = re.compile(rf"`((?:(?:{METHODS})\|)*(?:{METHODS}))? ?(/api/[^`\s?]*)[^`]*`")
LONE_METHODS = re.compile(rf"`({METHODS})` (?:and|or) `({METHODS}) (/api/[^`\s?]*)")
STATUS = re.compile(r"(?<![\w.,/#=+-])([45]\d\d)(?![\w,.]\d)(?! (?:MB|MiB|KiB|ms|s|bytes|days|lines)\b)")


def doc_blocks(text: str) -> list[str]:
    """The doc's paragraphs and list items, each on one line: a status and a route in one of them are a claim
    about that route."""
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n|\n(?=\s*[-*] )|\n(?=#)", text)]


def route_claims(text: str) -> list[tuple[str, list[tuple[str, str]], list[int]]]:
    """(block, [(method or "", path)], [4xx/5xx statuses]) for each paragraph or list item naming both."""
    claims = []
    for block in doc_blocks(text):
        named = [(method, path.rstrip(".,")) for method, path in ROUTE.findall(block)]
        named += [(first, path) for first, _, path in LONE_METHODS.findall(block)]
        routes = [(method, path) for joined, path in named for method in (joined.split("|") if joined else [""])]
        statuses = [int(code) for code in STATUS.findall(block)]
        if routes and statuses:
            claims.append((block, routes, statuses))
    return claims


def openapi_operation(paths: dict[str, Any], method: str, path: str) -> list[dict[str, Any]]:
    """The operations a documented ``METHOD /api/...`` names (every method of the path when none is given); a
    literal path before a templated one (``/api/jobs/test`` is not ``/api/jobs/{job_id}``)."""
    if path in paths:
        matched = path
    else:
        candidates = [
            known for known in paths if re.fullmatch(re.sub(r"\\\{[^}]+\\\}", r"[^/]+", re.escape(known)), path)
        ]
        if not candidates:
            return []
        matched = min(candidates, key=lambda known: known.count("{"))
    operations = paths[matched]
    if method:
        return [operations[method.lower()]] if method.lower() in operations else []
    return list(operations.values())


def test_every_status_the_doc_gives_a_route_is_one_the_route_declares(
    svc_plugins: PluginManager, svc_test_host: Host
) -> None:
    """A status docs/interfaces.md gives in a paragraph or list item naming routes must be one those routes declare
    in the OpenAPI (401, FastAPI's 422 and the security middleware's 400 and 403 included); a route the doc names
    must exist with that method."""
    paths = create_app(svc_test_host, security=security_for_tests()).openapi()["paths"]
    claims = route_claims(doc())
    assert len(claims) > 20, "the doc's status claims are no longer found: the test would check nothing"
    wrong = []
    for block, routes, statuses in claims:
        declared: set[int] = set()
        for method, path in routes:
            operations = openapi_operation(paths, method, path)
            if not operations:
                wrong.append(f"no such route: {method} {path}  <- {block}")
            for operation in operations:
                declared |= {int(code) for code in operation["responses"]}
        wrong += [f"{status} is not declared by {routes}  <- {block}" for status in statuses if status not in declared]
    assert not wrong, "\n".join(wrong)


DEFAULT = re.compile(
    rf"`(?:(?:{METHODS}) /api/[^`?]*)?\??(\w+)(?:=[^`]*)?`\**\s*\((?:[^()]*?, )?default:? `?([\w.-]+)`?"
)
"""A parameter and the default the doc gives it: ``limit`` (default 100), ``GET /api/x?hours=N`` (default 24)."""


def test_every_default_the_doc_gives_a_route_parameter_is_its_openapi_default(
    svc_plugins: PluginManager, svc_test_host: Host
) -> None:
    paths = create_app(svc_test_host, security=security_for_tests()).openapi()["paths"]
    checked, wrong = 0, []
    for block in doc_blocks(doc()):
        operations = [
            operation
            for joined, path in ROUTE.findall(block)
            for method in (joined.split("|") if joined else [""])
            for operation in openapi_operation(paths, method, path.rstrip(".,"))
        ]
        defaults = {
            parameter["name"]: parameter.get("schema", {}).get("default")
            for operation in operations
            for parameter in operation.get("parameters", [])
        }
        for name, stated in DEFAULT.findall(block):
            if name in defaults:
                checked += 1
                if str(defaults[name]) != stated:
                    wrong.append(f"{name}: the doc says default {stated}, the OpenAPI {defaults[name]}  <- {block}")
    assert checked >= 3, "the doc's parameter defaults are no longer found: the test would check nothing"
    assert not wrong, "\n".join(wrong)


QUERY = re.compile(rf"`((?:(?:{METHODS})\|)*(?:{METHODS}))? ?(/api/[^`\s?]*)\?([^`\s]*)`")
"""A route written with its query: ``GET /api/jobs?user=me|all``."""


def test_every_query_parameter_the_doc_writes_is_one_the_route_takes(
    svc_plugins: PluginManager, svc_test_host: Host
) -> None:
    paths = create_app(svc_test_host, security=security_for_tests()).openapi()["paths"]
    checked, wrong = 0, []
    for joined, path, query in QUERY.findall(doc()):
        for method in joined.split("|") if joined else [""]:
            operations = openapi_operation(paths, method, path.rstrip(".,"))
            for name in re.findall(r"(?:^|&)(\w+)=", query):
                checked += 1
                taken = [{parameter["name"] for parameter in op.get("parameters", [])} for op in operations]
                if not operations or not any(name in names for names in taken):
                    wrong.append(f"{method} {path} takes no ?{name}=")
    assert checked >= 5, "the doc's query parameters are no longer found: the test would check nothing"
    assert not wrong, wrong


async def test_every_default_the_doc_gives_a_tool_argument_is_its_schema_default(
    svc_plugins: PluginManager, svc_test_host: Host
) -> None:
    """``wait_seconds`` (default 60) in a paragraph naming `run_workflow` is the tool's schema default."""
    async with Client(create_server(svc_test_host)) as client:
        schemas = {tool.name: tool.input_schema.get("properties", {}) for tool in (await client.list_tools()).tools}
    checked, wrong = 0, []
    for block in doc_blocks(doc()):
        for name, stated in DEFAULT.findall(block):
            for tool in (tool for tool in schemas if f"`{tool}`" in block and name in schemas[tool]):
                checked += 1
                default = schemas[tool][name].get("default")
                if stated not in {str(default), str(int(default)) if isinstance(default, float) else ""}:
                    wrong.append(f"{tool}({name}): the doc says default {stated}, the schema {default}  <- {block}")
    assert checked >= 2, "the doc's tool argument defaults are no longer found: the test would check nothing"
    assert not wrong, "\n".join(wrong)


# -- the error shape ------------------------------------------------------------------------------------------


async def test_every_422_is_declared_with_the_body_it_answers(
    svc_plugins: PluginManager, svc_test_host: Host, svc_api_client: httpx.AsyncClient
) -> None:
    """The doc's "every error body is `{detail}`" in the OpenAPI too: FastAPI's own validation 422 is declared as
    ``ErrorBody`` (``{detail: string, errors}``, what svc answers), never FastAPI's ``HTTPValidationError``."""
    schema = create_app(svc_test_host, security=security_for_tests()).openapi()
    assert "HTTPValidationError" not in str(schema)
    other = [
        f"{method.upper()} {path}"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "422" in operation["responses"] and "ErrorBody" not in str(operation["responses"]["422"])
    ]
    assert not other, f"422 declared with another body: {other}"
    declared = schema["components"]["schemas"]["ErrorBody"]
    answer = await svc_api_client.get("/api/resources/history", params={"hours": 0})
    assert answer.status_code == 422
    body = answer.json()
    assert set(body) <= set(declared["properties"]), body
    assert set(declared["required"]) <= set(body)
    checked = ErrorBody.model_validate(body)
    assert isinstance(body["detail"], str)
    assert checked.errors is not None
    assert checked.errors[0].field == "hours", body


# -- statuses the doc gives to requests it describes ----------------------------------------------------------

PROBES = [
    ("/api/jobs/4294967296", "negative or past the bound"),
    ("/api/jobs/-1", "negative or past the bound"),
    ("/api/jobs/0", "job 0, which Slurm never assigns"),
    ("/api/jobs/0886", "like any bad id"),
    ("/api/sweep_runs/9007199254740993", "A sweep id in the path past that bound"),
]
"""A request and the words that describe it in docs/interfaces.md: the status in that doc sentence must be the
one the API answers (no cluster is asked: each is refused before)."""


def sentence_with(words: str) -> str:
    text = " ".join(doc().split())
    found = [sentence for sentence in re.split(r"(?<=[.;:])\s+", text) if words in sentence]
    assert len(found) == 1, f"docs/interfaces.md has {len(found)} sentences with {words!r}"
    return found[0]


@pytest.mark.parametrize(("path", "words"), PROBES)
async def test_the_doc_gives_a_request_the_status_it_gets(
    svc_plugins: PluginManager, svc_api_client: httpx.AsyncClient, path: str, words: str
) -> None:
    answer = await svc_api_client.get(path)
    stated = {int(code) for code in STATUS.findall(sentence_with(words))}
    assert stated == {answer.status_code}, f"{path} answers {answer.status_code} {answer.json()}; the doc says {stated}"


# -- quoted messages ------------------------------------------------------------------------------------------

MESSAGE_WORDS = re.compile(r"\b(not|no|cannot|must|should|unknown|invalid|refused|failed|requires|expected)\b")
NOT_A_MESSAGE = re.compile(r"^(svc |GET |POST |PUT |DELETE |PATCH |\{|\[|sbatch|squeue|sacct|scontrol|env |[\w.]+\()")


def quoted_messages() -> list[str]:
    """Every message docs/interfaces.md quotes (in backticks, four words or more, worded like an error)."""
    quotes = re.findall(r"`([^`]*)`", " ".join(doc().split()))
    return [q for q in quotes if len(q.split()) >= 4 and MESSAGE_WORDS.search(q) and not NOT_A_MESSAGE.match(q)]


def code_strings() -> list[str]:
    """Every string literal of the code, an f-string's fields as ``\\x00``."""
    found = []
    for root in CODE:
        for path in root.rglob("*.py"):
            if "tests" in path.relative_to(root).parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.JoinedStr):
                    found.append("".join(str(v.value) if isinstance(v, ast.Constant) else "\x00" for v in node.values))
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 8:
                    found.append(node.value)
    return found


VALUE = re.compile(r"<[\w ]+>|\.\.\.|\bN\b|'[^']*'|\"[^\"]*\"|\d+|(?<=choose one of: ).*$")
"""What a quoted message shows as an example value: a placeholder, ``...``, a quoted value, a number, the list of
choices."""


def unwrapped(quoted: str) -> str:
    """The message in a CLI's ``error: `` line or a REST ``404 {"detail": ...}`` body."""
    return re.sub(r'^\d{3} \{"detail": "(.*)"\}$', r"\1", re.sub(r"^(error|warning): ", "", quoted))


def says(real: str, quoted: str) -> bool:
    """Whether the real message is the quoted one, or begins with it, the quote's example values standing for
    any."""
    parts = VALUE.split(unwrapped(quoted))
    pattern = ".+?".join(re.escape(part) for part in parts)
    return re.match(pattern, real, flags=re.DOTALL) is not None


def in_code(quoted: str, literals: list[str]) -> bool:
    """The quote's words, its example values left out, appear in this order in one literal of the code (an
    f-string with its fields, a template, a message's beginning)."""
    pieces = [piece.strip() for piece in VALUE.split(unwrapped(quoted)) if piece.strip()]
    for literal in literals:
        at = 0
        for piece in pieces:
            at = literal.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        else:
            return True
    return False


async def produced(host: Host) -> dict[str, str]:
    """The real messages of the quotes no single literal of the code holds (composed from several), made now."""
    from svc_plugin_chat.settings import ChatConfig

    from svc_host.errors import ConfigError
    from svc_host.plugin_core.settings import plugin_settings, renderer_named
    from svc_host.schedules.model import ScheduleSpec
    from svc_host.settings.config import SvcConfig

    found: dict[str, str] = {}
    async with Client(create_server(host)) as client:
        for tool, arguments in (
            ("submit_job", {"nodes": [1]}),
            ("run_workflow", {"yaml_path": "x.yaml", "dryrun": True}),
            ("sync_files", {"transport": "local", "mount": "x"}),
        ):
            answer: Any = (await client.call_tool(tool, arguments)).structured_content
            found[tool] = answer["error"]
    with pytest.raises(ConfigError) as refused:
        plugin_settings(SvcConfig.model_validate({"plugins": {"chat": {"retry_seconds": 0}}}), "chat", ChatConfig)
    found["plugin settings"] = str(refused.value)
    with pytest.raises(ValueError, match="invalid cron") as cron:
        ScheduleSpec.model_validate({"name": "n", "workflow": "w", "cron": "0 25 * * *"})
    found["cron"] = re.findall(r"Value error, (.*?) \[type=", str(cron.value))[0]
    with pytest.raises(ConfigError) as renderer:
        renderer_named(host.plugins, "nope", where="job 'train'")
    found["renderer"] = str(renderer.value)
    return found


async def test_every_quoted_message_is_the_real_one(svc_plugins: PluginManager, svc_test_host: Host) -> None:
    quotes = quoted_messages()
    assert len(quotes) > 10, "the doc's quoted messages are no longer found: the test would check nothing"
    literals = code_strings()
    real = await produced(svc_test_host)
    wrong = [q for q in quotes if not in_code(q, literals) and not any(says(m, q) for m in real.values())]
    assert not wrong, f"quoted in docs/interfaces.md, said by nothing in svc: {wrong}"
