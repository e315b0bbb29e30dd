"""``svc config set plugins.<name>.<field> VALUE`` gives a text field the text as typed (a numeric account stays
``"1234"``, not the number 1234 the model would refuse); other fields still take JSON where it parses."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Literal

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from svc_host.plugin import SvcPaths, hookimpl
from svc_host.plugin_core.manager import create_plugin_manager


class SiteSettings(BaseModel):
    account: str = "none"
    label: str | None = None
    kind: Literal["1", "2"] = "1"
    retries: int = 1
    hosts: list[str] = []


@pytest.fixture(autouse=True)
def site_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    built = create_plugin_manager(entry_points_too=False)
    built.register(SimpleNamespace(svc_settings=hookimpl(lambda: SiteSettings)), "site")
    monkeypatch.setattr("svc_host.plugin_core.manager.get_plugin_manager", lambda: built)


def svc_config_set(field: str, value: str) -> object:
    from svc_host.cli import cli

    result = CliRunner().invoke(cli, ["config", "set", f"plugins.site.{field}", value])
    assert result.exit_code == 0, result.output
    return json.loads(SvcPaths.from_env().user_config.read_text())["plugins"]["site"][field]


@pytest.mark.parametrize(
    ("field", "value", "stored"),
    [
        ("account", "1234", "1234"),
        ("account", "true", "true"),
        ("account", '"1234"', "1234"),  # the quoted form hooks.md once advised still works
        ("label", "007", "007"),
        ("label", "null", None),
        ("kind", "2", "2"),
        ("retries", "5", 5),
        ("hosts", '["a", "b"]', ["a", "b"]),
    ],
)
def test_a_text_setting_keeps_the_text_and_others_take_json(field: str, value: str, stored: object) -> None:
    assert svc_config_set(field, value) == stored
