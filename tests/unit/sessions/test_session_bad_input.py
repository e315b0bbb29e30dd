"""A start with an unknown kind or fields its form refuses is a 400 in words, per field, with nothing written on
the cluster and nothing submitted."""

from __future__ import annotations

import httpx

from .conftest import FileTransport


async def test_an_unknown_kind_lists_the_kinds_and_writes_nothing(
    svc_api_client: httpx.AsyncClient, fake: FileTransport, web_kind: None
) -> None:
    answer = await svc_api_client.post("/api/sessions", json={"kind": "nope", "transport": "fake"})
    assert answer.status_code == 400
    assert answer.json()["detail"] == "unknown session kind 'nope'; choose one of: web"
    assert (fake.commands, fake.calls) == ([], [])


async def test_a_field_the_form_refuses_is_named_and_nothing_is_submitted(
    svc_api_client: httpx.AsyncClient, fake: FileTransport, web_kind: None
) -> None:
    answer = await svc_api_client.post("/api/sessions", json={"kind": "web", "fields": {}, "transport": "fake"})
    assert answer.status_code == 400
    assert answer.json()["errors"] == [{"field": "fields.command", "message": "is required"}]
    assert "session kind 'web': fields.command: Field required" in answer.json()["detail"]
    assert (fake.commands, fake.calls) == ([], [])


async def test_a_bad_gpu_count_is_the_house_422(
    svc_api_client: httpx.AsyncClient, fake: FileTransport, web_kind: None
) -> None:
    answer = await svc_api_client.post("/api/sessions", json={"kind": "web", "gpus": "lots", "transport": "fake"})
    assert answer.status_code == 422
    assert "gpus" in answer.json()["detail"]
    assert fake.calls == []


async def test_kinds_are_listed_with_their_form(svc_api_client: httpx.AsyncClient, web_kind: None) -> None:
    kinds = (await svc_api_client.get("/api/session-kinds")).json()
    assert [kind["name"] for kind in kinds] == ["web"]
    assert kinds[0]["fields"]["required"] == ["command"]
