"""The monitor's tests share one fake transport, a store, the events published and a fast-ticking monitor."""

from __future__ import annotations

import pytest

from svc_host.plugin_core.manager import PluginManager
from svc_host.plugin_core.records import Event
from svc_host.runtime.monitor import Monitor
from svc_host.runtime.transport_registry import TransportRegistry
from svc_host.store.database import Store
from svc_host.testing.fake import FakeTransport, transport_plugin


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport("fake")


@pytest.fixture
def store(database_url: str) -> Store:
    return Store(database_url)


@pytest.fixture
def events() -> list[Event]:
    return []


@pytest.fixture
def monitor(svc_plugin_manager: PluginManager, fake: FakeTransport, store: Store, events: list[Event]) -> Monitor:
    svc_plugin_manager.register(transport_plugin(fake), "fake-plugin")
    return Monitor(store, TransportRegistry(svc_plugin_manager), events.append, min_interval=0.01, max_interval=0.05)
