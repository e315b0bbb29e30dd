"""Delivery through a real HTTP receiver on loopback, run by a Host the way ``svc serve`` runs it."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from svc_host.plugin import Event, SvcPaths
from svc_host.testing import PluginSet, ServingHost, background_task_names, eventually, record_job, serving_host

import svc_plugin_chat.hooks
from svc_plugin_chat.messages import Message
from svc_plugin_chat.outbox import Outbox

from .conftest import Receiver


def failed_job(job_id: str) -> Event:
    return Event(
        name="job.status_changed",
        payload={"transport": "local", "job_id": job_id, "name": "train", "to": "FAILED", "exit_code": 1},
    )


def sweep_ended(sweep_id: int) -> Event:
    return Event(name="sweep_run.status_changed", payload={"id": sweep_id, "name": "lr", "to": "completed"})


@pytest.fixture
def chat_env(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> Receiver:
    monkeypatch.setenv("CHAT_WEBHOOK_URL", receiver.url)
    monkeypatch.setenv("SVC_CHAT_ALLOW_HTTP_HOSTS", "127.0.0.1")
    monkeypatch.setenv("SVC_CHAT_RETRY_SECONDS", "0.2")
    monkeypatch.setenv("SVC_CHAT_RETRY_MAX_SECONDS", "0.4")
    monkeypatch.setenv("SVC_CHAT_TIMEOUT_SECONDS", "30")  # a post the receiver took is never given up and sent again
    return receiver


async def drained(server: ServingHost, delivered: int, refused: int = 0) -> None:
    """Once the outbox holds nothing more to send: every message delivered or refused, none waiting. A message
    sent twice would have been sent by then (it is marked delivered after its post), so counting after this is
    final, however slow the machine."""
    wanted = {"delivered": delivered, "waiting": 0, "refused": refused}
    await eventually(
        lambda: server.plugins.health(server.paths)["chat"].details,
        until=lambda details: {key: details.get(key) for key in wanted} == wanted,
        what=f"the outbox drained: {wanted}",
    )


def make_server(svc_plugin_manager: PluginSet, paths: SvcPaths) -> ServingHost:
    return serving_host(svc_plugin_manager, paths)


@pytest.fixture
async def server(
    svc_plugin_manager: PluginSet, svc_register_plugin: Callable[..., Any], svc_paths: SvcPaths
) -> AsyncIterator[ServingHost]:
    svc_register_plugin(svc_plugin_chat.hooks, "chat")
    host = make_server(svc_plugin_manager, svc_paths)
    await host.start()
    assert background_task_names(host) == ["chat-outbox"]
    yield host
    await host.close()


async def test_a_receiver_that_was_down_gets_every_message_once_in_order(
    chat_env: Receiver, server: ServingHost
) -> None:
    server.plugins.emit(failed_job("1"))
    server.plugins.emit(failed_job("2"))
    server.plugins.emit(sweep_ended(7))
    await eventually(
        lambda: "unreachable" in server.plugins.health(server.paths)["chat"].summary,
        what="a failed attempt against the closed port",
    )
    assert chat_env.bodies == []
    health = server.plugins.health(server.paths)["chat"]
    assert health.details["waiting"] == 3
    assert "unreachable" in health.summary
    assert "secret-part" not in health.summary

    chat_env.up()
    await drained(server, delivered=3)  # nothing is sent twice
    assert chat_env.texts() == [
        ":x: svc: Job 1 (train) on local ended FAILED, exit code 1.",
        ":x: svc: Job 2 (train) on local ended FAILED, exit code 1.",
        ":white_check_mark: svc: Sweep 7 (lr) completed: 0 cells, 0 completed, 0 failed, 0 cancelled, 0 running, "
        "0 pending.",
    ]
    health = server.plugins.health(server.paths)["chat"]
    assert health.ok
    assert health.summary == f"http://127.0.0.1:{chat_env.port}/… (slack): 3 delivered, 0 waiting, 0 refused"


async def test_the_same_change_emitted_twice_is_one_message(chat_env: Receiver, server: ServingHost) -> None:
    chat_env.up()
    server.plugins.emit(failed_job("5"))
    server.plugins.emit(failed_job("5"))
    await drained(server, delivered=1)
    assert len(chat_env.bodies) == 1


async def test_a_slow_webhook_blocks_nothing(
    chat_env: Receiver, server: ServingHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_CHAT_TIMEOUT_SECONDS", "60")  # a post made on the event loop would hold it a minute
    chat_env.status, chat_env.delay = 503, 120.0  # answers late, and badly
    chat_env.up()
    server.plugins.emit(failed_job("8"))
    started = time.monotonic()
    for _ in range(20):  # the event loop keeps ticking while the post waits in a worker thread
        await asyncio.sleep(0.05)
    await eventually(lambda: chat_env.hits >= 1)
    assert time.monotonic() - started < 30  # a second's worth of ticks, not held for the post's minute
    chat_env.status, chat_env.delay = 200, 0.0
    chat_env.hurry.set()  # the held post gets its 503 now; the retry is answered at once
    await drained(server, delivered=1)
    assert len(chat_env.bodies) == 1


async def test_a_refused_message_is_kept_and_does_not_block_the_next(chat_env: Receiver, server: ServingHost) -> None:
    chat_env.status = 400
    chat_env.up()
    server.plugins.emit(failed_job("9"))
    await eventually(lambda: chat_env.hits == 1)
    chat_env.status = 200
    server.plugins.emit(failed_job("10"))
    await drained(server, delivered=1, refused=1)
    assert (chat_env.hits, len(chat_env.bodies)) == (2, 1)  # the refused one was not retried
    health = server.plugins.health(server.paths)["chat"]
    assert not health.ok
    assert health.details == {
        "delivered": 1,
        "waiting": 0,
        "refused": 1,
        "outbox": str(server.paths.state_dir / "chat-outbox.sqlite"),
    }
    assert "last error: HTTP 400" in health.summary


async def test_events_of_a_cli_command_are_delivered_by_the_next_server(
    chat_env: Receiver, svc_plugin_manager: PluginSet, svc_register_plugin: Callable[..., Any]
) -> None:
    svc_register_plugin(svc_plugin_chat.hooks, "chat")
    svc_plugin_manager.emit(failed_job("11"))  # no server in this process: straight into the outbox
    chat_env.up()
    await asyncio.sleep(0.3)
    assert chat_env.bodies == []
    host = make_server(svc_plugin_manager, SvcPaths.from_env())
    await host.start()
    try:
        await eventually(lambda: len(chat_env.bodies) == 1)
    finally:
        await host.close()
    assert "Job 11" in chat_env.texts()[0]


def test_an_unsafe_url_is_reported_not_used(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch, svc_plugin_manager: PluginSet, svc_paths: SvcPaths
) -> None:
    svc_plugin_manager.register(svc_plugin_chat.hooks, "chat")
    monkeypatch.setenv("CHAT_WEBHOOK_URL", receiver.url)
    health = svc_plugin_manager.health(svc_paths)["chat"]
    assert not health.ok
    assert health.summary == (
        f"not sending: chat webhook URL 'http://127.0.0.1:{receiver.port}/…' uses plain http; use https, or "
        "allow this host with SVC_CHAT_ALLOW_HTTP_HOSTS=127.0.0.1"
    )
    monkeypatch.delenv("CHAT_WEBHOOK_URL")
    assert svc_plugin_manager.health(svc_paths)["chat"].summary == "off: no chat webhook URL set"


async def test_a_workflows_own_failed_job_is_left_to_its_run(chat_env: Receiver, server: ServingHost) -> None:
    for job_id, source in (("20", "workflow"), ("21", "cli")):
        await record_job(server, transport="local", job_id=job_id, name="train", source=source)
    chat_env.up()
    server.plugins.emit(failed_job("20"))
    server.plugins.emit(failed_job("21"))
    await drained(server, delivered=1)
    assert chat_env.texts() == [":x: svc: Job 21 (train) on local ended FAILED, exit code 1."]


def test_messages_queued_at_once_into_a_new_outbox_are_all_kept(tmp_path: Path) -> None:
    """The first writers of a fresh outbox file used to race to switch it to WAL, and the loser's message was
    lost with "database is locked" (seen in CI when the delivery loop and the first event met)."""
    start = threading.Barrier(6)
    errors: list[sqlite3.Error] = []

    def queue(n: int, state_dir: Path) -> None:
        start.wait()
        try:
            Outbox(state_dir).add(Message(key=f"k{n}", title="t", text=f"message {n}", outcome="neutral"))
            Outbox(state_dir).claim_head(lease_seconds=60)
        except sqlite3.Error as error:  # collected and asserted below
            errors.append(error)

    for round_ in range(20):
        state_dir = tmp_path / f"state{round_}"
        threads = [threading.Thread(target=queue, args=(n, state_dir)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stats = Outbox(state_dir).stats()
        assert stats is not None
        assert stats.pending == 6
    assert errors == []
