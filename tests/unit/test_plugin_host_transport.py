"""``PluginHost.transport`` keeps its promise: an unknown name is a ``NotFoundError`` (REST 404, the spec's answer for
a profile that does not exist) whose message lists the choices, and still a ``PluginError`` for code that caught
one."""

from __future__ import annotations

import pytest

from svc_host.api.errors import status_for
from svc_host.host import Host
from svc_host.plugin import NotFoundError, PluginError, PluginHost


def test_an_unknown_transport_is_the_promised_not_found_error() -> None:
    host: PluginHost = Host.create("cli", read_env=False)
    with pytest.raises(NotFoundError, match=r"^unknown transport 'nope'; choose one of: local \(from ") as raised:
        host.transport("nope")
    assert isinstance(raised.value, PluginError)
    assert status_for(raised.value) == 404
