"""End to end on the dev cluster: a real job failure reaches a webhook that was down, exactly once."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import svc_plugin_local.hooks
from svc_host.plugin import JobDefinition, SvcPaths
from svc_host.testing import PluginSet, eventually, submit_job

import svc_plugin_chat.hooks

from .conftest import Receiver
from .test_delivery import make_server

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


async def test_a_failed_job_reaches_the_webhook_exactly_once(
    slurm_cluster: None,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    svc_plugin_manager: PluginSet,
    svc_register_plugin: Callable[..., Any],
    svc_paths: SvcPaths,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("CHAT_WEBHOOK_URL", receiver.url)
    monkeypatch.setenv("SVC_CHAT_ALLOW_HTTP_HOSTS", "127.0.0.1")
    monkeypatch.setenv("SVC_CHAT_RETRY_SECONDS", "0.5")
    monkeypatch.setenv("SVC_CHAT_RETRY_MAX_SECONDS", "1")
    svc_register_plugin(svc_plugin_local.hooks, "local", distribution="svc", version="0")
    svc_register_plugin(svc_plugin_chat.hooks, "chat")
    host = make_server(svc_plugin_manager, svc_paths)
    await host.start()
    job_id = ""
    try:
        definition = JobDefinition(name="chat-e2e", command="exit 3", work_dir=str(tmp_path), log_dir=str(tmp_path))
        job_id = await submit_job(host, definition, transport="local")
        # the receiver is down while the job fails: the message waits in the outbox
        await eventually(lambda: host.plugins.health(host.paths)["chat"].details.get("waiting") == 1, timeout=120)
        assert receiver.bodies == []
        receiver.up()
        await eventually(lambda: len(receiver.bodies) == 1, timeout=30)
        await asyncio.sleep(2)
    finally:
        await host.close()
        if job_id:
            await asyncio.to_thread(subprocess.run, ["scancel", job_id], check=False, timeout=60)
    assert receiver.texts() == [f":x: svc: Job {job_id} (chat-e2e) on local ended FAILED, exit code 3."]
