"""A transport factory that asks the host for its own transport (directly, or through another site transport) is
told so as a ``PluginError`` naming the cycle, not left to recurse until Python's limit and reported as an
unrelated configuration error."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from svc_host.plugin import PluginError, PluginHost, TransportSpec, hookimpl
from svc_host.testing import FakeTransport


def transports_plugin(*specs: TransportSpec) -> SimpleNamespace:
    return SimpleNamespace(svc_transports=hookimpl(lambda config: list(specs)))


def built_on(name: str) -> Callable[..., Any]:
    def factory(*, host: PluginHost) -> Any:
        return host.transport(name)

    return factory


def test_a_transport_built_on_itself_is_a_plugin_error_naming_it(
    svc_test_host: PluginHost, svc_register_plugin: Callable[..., Any]
) -> None:
    svc_register_plugin(transports_plugin(TransportSpec(name="site", factory=built_on("site"))), "site")
    with pytest.raises(PluginError, match=r"^transport 'site' is built on itself \(site -> site\)"):
        svc_test_host.transport("site")


def test_a_cycle_through_two_transports_names_every_step(
    svc_test_host: PluginHost, svc_register_plugin: Callable[..., Any]
) -> None:
    a = TransportSpec(name="a", factory=built_on("b"))
    b = TransportSpec(name="b", factory=built_on("a"))
    svc_register_plugin(transports_plugin(a, b), "cycle")
    with pytest.raises(PluginError, match=r"^transport 'a' is built on itself \(a -> b -> a\)"):
        svc_test_host.transport("a")
    # nothing half-built is kept: asked again, the same answer
    with pytest.raises(PluginError, match=r"built on itself \(b -> a -> b\)"):
        svc_test_host.transport("b")


def test_a_transport_built_on_another_one_still_works(
    svc_test_host: PluginHost, svc_register_plugin: Callable[..., Any]
) -> None:
    inner = FakeTransport()
    site = TransportSpec(name="site", factory=built_on("inner"))
    svc_register_plugin(transports_plugin(site, TransportSpec(name="inner", factory=lambda: inner)), "site")
    assert svc_test_host.transport("site") is inner
    assert svc_test_host.transport("inner") is inner


def test_reading_the_environment_reports_only_bad_values_as_environment_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pydantic-settings wraps whatever fails while it reads a variable; only a value that does not parse is the
    environment's fault (a RecursionError from a cycle was once reported as a bad ``work_dir``)."""
    from svc_host.errors import ConfigError
    from svc_host.settings import config

    with pytest.raises(ConfigError, match=r"^environment: .*take JSON"):
        config.env_layer({"SVC_ENVIRONMENT__ENV_VARS": "not json"})

    def fails(*args: object) -> object:
        raise RuntimeError("not the environment's fault")

    monkeypatch.setattr(config._MappingEnvSource, "_get_resolved_field_value", fails)
    with pytest.raises(RuntimeError, match=r"^not the environment's fault$"):
        config.env_layer({"SVC_WORK_DIR": "run"})
