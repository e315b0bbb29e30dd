"""Test support for svc and for plugin authors: fixtures, contract suites, a fake transport and waiting helpers.

``from svc_host.testing import TransportContract, eventually`` — a plugin's tests import from here (and from
``svc_host.plugin``); the names in ``__all__`` are public, under the plugin API's version and snapshot
(tests/unit/plugin_api/), and change as ``svc_host.plugin``'s do. The modules behind them are not: import the
names from this package. Subclass ``TransportContract`` (or ``SyncBackendContract``) in your plugin's tests to
prove your transport (or sync backend) behaves like svc's own; ``FakeTransport`` serves fast unit tests.

The fixtures (``svc_plugin_manager``, ``svc_paths``, ``svc_test_host``...) are in ``svc_host.testing.plugin``, a
pytest plugin a project asks for (``-p svc_host.testing.plugin``). Names load on first use, so importing this package
costs nothing of pytest, FastAPI or the store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# ``live_server`` is a public name and the submodule that defines it: bound here, so the name is the function
# whichever is imported first (importing a submodule sets the package's attribute of its name to the module, which
# would shadow a name loaded on first use). The module imports nothing heavy at its top.
from svc_host.testing.live_server import live_server

_WHERE: dict[str, str] = {
    # contract suites, and what they write and read
    "TransportContract": "svc_host.testing.contract",
    "SyncBackendContract": "svc_host.testing.sync_contract",
    "write_tree": "svc_host.testing.sync_contract",
    "user_entries": "svc_host.testing.sync_contract",
    # a transport with no cluster behind it, and a plugin offering one; the transport svc makes for a profile
    "FakeTransport": "svc_host.testing.fake",
    "TransportPlugin": "svc_host.testing.fake",
    "transport_plugin": "svc_host.testing.fake",
    "profile_transport": "svc_host.testing.transports",
    # a host as svc serve runs one, for plugins that work in servers
    "PluginSet": "svc_host.testing.hosts",
    "ServingHost": "svc_host.testing.hosts",
    "serving_host": "svc_host.testing.hosts",
    "background_task_names": "svc_host.testing.hosts",
    "record_job": "svc_host.testing.hosts",
    "submit_job": "svc_host.testing.hosts",
    # waiting on what happens elsewhere, with deadlines of seconds
    "eventually": "svc_host.testing.waiting",
    "eventually_blocking": "svc_host.testing.waiting",
    "wait_for_state": "svc_host.testing.waiting",
    # clients of svc's faces
    "asgi_client": "svc_host.testing.http",
    "security_for_tests": "svc_host.testing.http",
    "TEST_API_TOKEN": "svc_host.testing.http",
    "live_server": "svc_host.testing.live_server",
    "SseMessage": "svc_host.testing.sse",
    "sse_messages": "svc_host.testing.sse",
    # ``svc serve`` as a process of its own
    "ServeProcess": "svc_host.testing.serve",
    "start_serve": "svc_host.testing.serve",
    "running_serve": "svc_host.testing.serve",
    "isolated_env": "svc_host.testing.serve",
    "free_port": "svc_host.testing.serve",
    # cluster tests: skipped on a laptop, failed in CI
    "in_ci": "svc_host.testing.plugin",
    "skip_or_fail": "svc_host.testing.plugin",
}

__all__ = [
    "TEST_API_TOKEN",
    "FakeTransport",
    "PluginSet",
    "ServeProcess",
    "ServingHost",
    "SseMessage",
    "SyncBackendContract",
    "TransportContract",
    "TransportPlugin",
    "asgi_client",
    "background_task_names",
    "eventually",
    "eventually_blocking",
    "free_port",
    "in_ci",
    "isolated_env",
    "live_server",
    "profile_transport",
    "record_job",
    "running_serve",
    "security_for_tests",
    "serving_host",
    "skip_or_fail",
    "sse_messages",
    "start_serve",
    "submit_job",
    "transport_plugin",
    "user_entries",
    "wait_for_state",
    "write_tree",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"svc_host.testing has no attribute {name!r} (the public names: docs/plugins/api.md)")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:
    from svc_host.testing.contract import TransportContract
    from svc_host.testing.fake import FakeTransport, TransportPlugin, transport_plugin
    from svc_host.testing.hosts import (
        PluginSet,
        ServingHost,
        background_task_names,
        record_job,
        serving_host,
        submit_job,
    )
    from svc_host.testing.http import TEST_API_TOKEN, asgi_client, security_for_tests
    from svc_host.testing.live_server import live_server
    from svc_host.testing.plugin import in_ci, skip_or_fail
    from svc_host.testing.serve import ServeProcess, free_port, isolated_env, running_serve, start_serve
    from svc_host.testing.sse import SseMessage, sse_messages
    from svc_host.testing.sync_contract import SyncBackendContract, user_entries, write_tree
    from svc_host.testing.transports import profile_transport
    from svc_host.testing.waiting import eventually, eventually_blocking, wait_for_state
