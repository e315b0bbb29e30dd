"""``svc plugins`` calls every collect hook and lists each plugin's pieces; a plugin settings section its plugin
refuses names its file and layer and stops nothing else; ``SVC_PLUGINS__*`` variables take JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner

from svc_host import hookimpl
from svc_host.errors import ConfigError
from svc_host.plugin_core.manager import PluginManager, create_plugin_manager
from svc_host.plugin_core.records import RendererSpec, TransportSpec
from svc_host.plugin_core.settings import plugin_settings
from svc_host.rendering.sbatch import render_sbatch
from svc_host.settings.config import load_config
from svc_host.settings.paths import SvcPaths
from svc_plugin_local.transport import LocalTransport


def run_in_process(*args: str) -> click.testing.Result:
    """``svc ARGS`` in this process, so that a test's plugin manager is the one it lists."""
    from svc_host.cli import cli

    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "250"})


def run_svc(*args: str) -> subprocess.CompletedProcess[str]:
    """``svc ARGS`` as a user runs it, with the installed plugins, in the test's isolated home."""
    return subprocess.run(
        [sys.executable, "-m", "svc_host", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "250"},
    )


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    """The built-ins, a plugin whose ``svc_renderers`` returns garbage, and a sound one, as ``svc`` sees them."""
    built = create_plugin_manager(entry_points_too=False)
    built.register(SimpleNamespace(svc_renderers=hookimpl(lambda: "not a list of renderers")), "garbage")
    sound = SimpleNamespace(
        svc_transports=hookimpl(lambda config: [TransportSpec(name="mysite", factory=LocalTransport)]),
        svc_renderers=hookimpl(lambda: [RendererSpec(name="mysite", render=render_sbatch)]),
        svc_cli_commands=hookimpl(lambda: [click.Command("mysite")]),
    )
    built.register(sound, "sound")
    monkeypatch.setattr("svc_host.plugin_core.manager.get_plugin_manager", lambda: built)
    return built


def test_a_garbage_returning_hook_shows_as_failed_with_the_reason(
    manager: PluginManager, caplog: pytest.LogCaptureFixture
) -> None:
    result = run_in_process("plugins", "--json")
    assert result.exit_code == 0, result.output
    listed = {entry["name"]: entry for entry in json.loads(result.stdout)}
    assert listed["garbage"]["status"] == "failed"
    assert listed["garbage"]["error"] == (
        "plugin garbage (local 0) failed in svc_renderers: returned str, expected a list of RendererSpec"
    )
    assert listed["sound"]["status"] == "ok"
    assert listed["sound"]["pieces"] == {
        "transports": ["mysite"],
        "renderers": ["mysite"],
        "cli_commands": ["mysite"],
    }
    assert listed["svc_host.rendering.hooks"]["pieces"] == {"renderers": ["default"]}
    assert "GET /api/plugins" in listed["svc_host.api.hooks"]["pieces"]["routes"]
    assert "submit_job" in listed["svc_host.mcp.hooks"]["pieces"]["mcp_tools"]

    caplog.clear()
    text = run_in_process("plugins")
    assert text.exit_code == 0, text.output
    row = next(line for line in text.stdout.splitlines() if "garbage" in line)
    assert "failed: plugin garbage (local 0) failed in svc_renderers: returned str" in row
    assert "transports: mysite; renderers: mysite; cli commands: mysite" in text.stdout
    assert caplog.text.count("failed in svc_renderers") == 1  # each hook called once: one log line


def test_a_name_two_plugins_offer_is_a_warning_naming_both(manager: PluginManager) -> None:
    manager.register(SimpleNamespace(svc_cli_commands=hookimpl(lambda: [click.Command("mysite")])), "again")
    result = run_in_process("plugins")
    assert result.exit_code == 0, result.output
    assert (
        "warning: cli commands 'mysite' is offered by sound and again: a server will not start; disable one with "
        "SVC_DISABLE_PLUGINS"
    ) in result.output  # what the terminal shows (click 8.1 has no stderr of its own unless mixing is turned off)


@pytest.fixture
def bad_chat_section(home: Path) -> Path:
    """The user file with a value the chat plugin's model refuses."""
    user_file = SvcPaths.from_env().user_config
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text(json.dumps({"plugins": {"chat": {"retry_seconds": 0}}}))
    return user_file


def test_a_refused_plugin_section_names_its_file_and_stops_nothing_else(bad_chat_section: Path) -> None:
    where = f"(set in user config {bad_chat_section})"
    shown = run_svc("config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["plugins"]["chat"] == {"retry_seconds": 0}  # as stored

    unrelated = run_svc("config", "set", "resources.nodes", "2")
    assert unrelated.returncode == 0, unrelated.stderr
    assert json.loads(bad_chat_section.read_text()) == {
        "plugins": {"chat": {"retry_seconds": 0}},
        "resources": {"nodes": 2},
    }

    same_section = run_svc("config", "set", "plugins.chat.format", "teams")
    assert same_section.returncode == 1
    assert same_section.stderr.strip() == (
        f"error: plugin 'chat' settings (plugins.chat): retry_seconds: Input should be greater than 0 {where}"
    )
    assert run_svc("config", "set", "plugins.chat.retry_seconds", "3").returncode == 0  # the fix is accepted

    bad_chat_section.write_text(json.dumps({"plugins": {"chat": {"retry_seconds": 0}}}))
    listed = run_svc("plugins")
    assert f"warning: plugin 'chat' settings (plugins.chat): retry_seconds: Input should be greater than 0 {where}" in (
        listed.stderr
    )
    with pytest.raises(ConfigError, match=r"retry_seconds: Input should be greater than 0 \(set in user config "):
        plugin_settings(load_config(SvcPaths.from_env(), env={}), "chat", _chat_model())


def _chat_model() -> type:
    models = create_plugin_manager().settings_models()
    return models["chat"]


def test_plugin_variables_take_json_lists_and_objects_and_name_themselves(home: Path) -> None:
    paths = SvcPaths.from_env()
    env = {"SVC_PLUGINS__CHAT__ALLOW_HTTP_HOSTS": '["hooks.lan", "ci.lan"]', "SVC_PLUGINS__CHAT__FORMAT": "teams"}
    config = load_config(paths, env=env)
    assert config.plugins["chat"] == {"allow_http_hosts": ["hooks.lan", "ci.lan"], "format": "teams"}
    assert plugin_settings(config, "chat", _chat_model()).allow_http_hosts == ["hooks.lan", "ci.lan"]

    refused = load_config(paths, env={"SVC_PLUGINS__CHAT__RETRY_SECONDS": "0"})
    with pytest.raises(ConfigError, match=r"\(set in environment variable SVC_PLUGINS__CHAT__RETRY_SECONDS\)$"):
        plugin_settings(refused, "chat", _chat_model())
    with pytest.raises(ConfigError) as caught:
        load_config(paths, env={"SVC_PLUGINS__CHAT__ALLOW_HTTP_HOSTS": '["hooks.lan"'})
    assert str(caught.value).startswith("environment variable SVC_PLUGINS__CHAT__ALLOW_HTTP_HOSTS: not valid JSON (")


def test_a_broken_profiles_file_is_a_warning_and_the_plugins_are_still_listed(home: Path) -> None:
    profiles = SvcPaths.from_env().profiles_file
    profiles.parent.mkdir(parents=True, exist_ok=True)
    profiles.write_text(json.dumps({"profiles": {"LOCAL": {}}}))
    listed = run_svc("plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.startswith(f"warning: {profiles}: profiles: invalid profile name 'LOCAL'")
    entries = {entry["name"]: entry for entry in json.loads(listed.stdout)}
    assert entries["local"]["pieces"] == {"transports": ["local"]}
