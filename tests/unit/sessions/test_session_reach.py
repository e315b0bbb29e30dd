"""How svc reaches a ready session for the sessions' origin: the store's row (where the guard listens), the
secret from the session's directory, the kind's own headers with the secret put in; nothing for a session that is
not ready or unknown. A kind's ``proxy_headers`` must be header names with one-line values."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel

from svc_host.host import Host
from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.records import AppLaunch, SessionKindSpec
from svc_host.sessions import reach, secrets
from svc_host.store import sessions as repo

from .conftest import FileTransport

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DIR = "/home/u/.svc/sessions/r"


class NoFields(BaseModel):
    pass


def kind(proxy_headers: Mapping[str, Any]) -> SessionKindSpec:
    return SessionKindSpec(
        name="tokened",
        description="an app with a token",
        fields=NoFields,
        launch=lambda _: AppLaunch(argv=["app"]),
        proxy_headers=proxy_headers,
    )


class TokenedKind:
    @hookimpl
    def svc_session_kinds(self) -> list[SessionKindSpec]:
        return [kind(proxy_headers={"Authorization": "token {secret}", "X-Site": "lab"})]


@pytest.fixture
def tokened(svc_register_plugin: Callable[..., None]) -> None:
    svc_register_plugin(TokenedKind(), "tokened-kind")


async def a_session(host: Host, fake: FileTransport, state: str) -> None:
    await host.store.run(
        repo.add_session,
        cluster="fake",
        job_id="7",
        kind="tokened",
        fields="{}",
        source="web",
        session_dir=DIR,
        start_timeout_seconds=60,
        now=NOW,
    )
    changes = {"state": state, "node_host": "node3", "node_port": 40123}
    await host.store.run(repo.move, "fake", "7", expected="queued", changes=changes, now=NOW)
    fake.files[f"{DIR}/secret"] = b"s3cret\n"
    secrets.forget("fake", "7")


async def test_a_ready_session_is_reached_at_its_guard_with_the_kinds_headers(
    svc_test_host: Host, fake: FileTransport, tokened: None
) -> None:
    await a_session(svc_test_host, fake, "ready")
    target = await reach.resolver(svc_test_host)("fake", "7")
    assert target is not None
    assert target.endpoint == "node3:40123"
    assert target.secret == "s3cret"
    assert dict(target.headers) == {"Authorization": "token s3cret", "X-Site": "lab"}


@pytest.mark.parametrize("state", ["queued", "starting", "ended"])
async def test_a_session_not_ready_is_not_reached(
    svc_test_host: Host, fake: FileTransport, tokened: None, state: str
) -> None:
    await a_session(svc_test_host, fake, state)
    assert await reach.resolve(svc_test_host, "fake", "7") is None
    assert await reach.resolve(svc_test_host, "fake", "8") is None


@pytest.mark.parametrize(
    "headers", [{"Bad Header": "x"}, {"X-Two": "line\r\nInjected: 1"}, {"": "x"}, {"X-Not-Text": 3}]
)
def test_a_kinds_proxy_headers_are_header_names_with_one_line_values(headers: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="proxy_headers"):
        kind(proxy_headers=headers)
