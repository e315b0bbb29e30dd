"""``svc_session_kinds``: kinds are collected from every plugin into one table, by name, and a clash names both."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from svc_host.errors import PluginError
from svc_host.plugin import AppLaunch, SessionKindSpec, hookimpl
from svc_host.plugin_core.manager import PluginManager


class NoFields(BaseModel):
    pass


def kind(name: str) -> SessionKindSpec:
    return SessionKindSpec(name=name, description=name, fields=NoFields, launch=lambda _: AppLaunch(argv=["app"]))


def kinds_plugin(*names: str) -> SimpleNamespace:
    return SimpleNamespace(svc_session_kinds=hookimpl(lambda: [kind(name) for name in names]))


def test_svc_session_kinds_of_a_plugin_are_offered_by_name(svc_plugin_manager: PluginManager) -> None:
    svc_plugin_manager.register(kinds_plugin("notebook", "board"), "mine")
    assert {"notebook", "board"} <= set(svc_plugin_manager.session_kinds())
    assert svc_plugin_manager.session_kind("board").description == "board"


def test_a_duplicate_kind_name_names_every_provider(svc_plugin_manager: PluginManager) -> None:
    svc_plugin_manager.register(kinds_plugin("notebook"), "first", distribution="svc-first", version="1.0")
    svc_plugin_manager.register(kinds_plugin("notebook"), "second", distribution="svc-second", version="2.0")
    with pytest.raises(PluginError) as raised:
        svc_plugin_manager.session_kinds()
    assert "duplicate session kind names: 'notebook' from" in str(raised.value)
    assert "first (svc-first 1.0)" in str(raised.value)
    assert "second (svc-second 2.0)" in str(raised.value)


def test_an_unknown_kind_lists_the_kinds_on_offer(svc_plugin_manager: PluginManager) -> None:
    svc_plugin_manager.register(kinds_plugin("notebook"), "mine", distribution="svc-mine", version="0.1")
    with pytest.raises(PluginError, match=r"unknown session kind 'lab'; choose one of: .*notebook \(from mine"):
        svc_plugin_manager.session_kind("lab")


def test_a_plugin_returning_something_else_is_named(svc_plugin_manager: PluginManager) -> None:
    svc_plugin_manager.register(SimpleNamespace(svc_session_kinds=hookimpl(lambda: ["jupyter"])), "wrong")
    with pytest.raises(
        PluginError,
        match=r"plugin wrong \(local 0\) failed in svc_session_kinds: returned str 'jupyter', expected SessionKindSpec",
    ):
        svc_plugin_manager.session_kinds()


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"name": "Jupyter"}, "session kind name 'Jupyter' is invalid"),
        ({"fields": dict}, "fields must be a pydantic model class"),
        ({"ready_path": "/api/status"}, "ready_path '/api/status' must be a URL path relative"),
        ({"open_path": "../lab"}, "open_path '../lab' must be a URL path relative"),
        ({"busy_path": "https://elsewhere/x"}, "busy_path 'https://elsewhere/x' must be a URL path relative"),
        ({"start_timeout": 0}, "start_timeout must be more than 0"),
        ({"idle_minutes": 0}, "idle_minutes must be 1 or more"),
    ],
)
def test_a_kind_that_cannot_work_is_refused_when_made(changes: dict[str, object], complaint: str) -> None:
    given: dict[str, object] = {"name": "k", "description": "", "fields": NoFields, "launch": lambda _: None}
    with pytest.raises(ValueError, match=complaint.replace("(", r"\(").replace(".", r"\.")):
        SessionKindSpec(**{**given, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "complaint"),
    [
        ({"argv": "jupyter lab"}, "argv must be a non-empty list of strings"),
        ({"argv": []}, "argv must be a non-empty list of strings"),
        ({"argv": ["a"], "env": {"BAD-NAME": "x"}}, "env names must be shell identifiers: 'BAD-NAME'"),
        ({"argv": ["a\0b"]}, "without NUL"),
        ({"argv": ["a"], "path": ["/opt/x\n/y"]}, "may not contain line breaks"),
    ],
)
def test_a_launch_that_cannot_run_is_refused_when_made(given: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        AppLaunch(**given)  # type: ignore[arg-type]
