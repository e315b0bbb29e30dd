"""Hook implementations of the chat plugin (entry point ``svc: chat``); the work lives in the other modules.

``svc_event`` only queues: in a server it hands the event to the running notifier (a worker thread writes the
outbox); in a CLI command, which runs no notifier, it writes the outbox of the default state dir and the next
server delivers it. ``svc_background_tasks`` starts the notifier in servers; ``svc_health`` reports the outbox.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from svc_host.plugin import Event, HealthReport, TaskSpec, hookimpl

if TYPE_CHECKING:
    from pydantic import BaseModel
    from svc_host.plugin import PluginHost, SvcPaths

    from svc_plugin_chat.delivery import Notifier
    from svc_plugin_chat.settings import ChatSettings

log = logging.getLogger(__name__)

SVC_DELIVERS = ("notifications.chat_webhook_url",)
"""The configuration this plugin acts on: without a plugin declaring it, svc warns that a webhook sends nothing."""

RUNNING: dict[Path, Notifier] = {}
"""The notifier of each state dir served by this process (one per host started as a server)."""

STUCK_SECONDS = 900
"""A message waiting longer than this makes the plugin's health ask for attention."""


def settings_for(paths: SvcPaths, *, read_env: bool = True) -> ChatSettings:
    """The chat settings of an svc installation: its layered config (``plugins.chat``), then ``SVC_CHAT_*``."""
    from svc_host.plugin import load_config, plugin_settings

    from svc_plugin_chat.settings import ChatConfig, ChatSettings

    config = load_config(paths, env=os.environ if read_env else None)
    section = plugin_settings(config, "chat", ChatConfig)
    return ChatSettings.from_env(config.notifications.chat_webhook_url, section=section)


def queue_event(event: Event, outbox_dir: Path, settings: ChatSettings) -> bool:
    """Blocking: put ``event``'s message (if it deserves one and a webhook is set) into the outbox."""
    from svc_plugin_chat.messages import message_for
    from svc_plugin_chat.outbox import Outbox

    if settings.url is None:
        return False
    message = message_for(event, settings.rules)
    return message is not None and Outbox(outbox_dir).add(message)


def _queue_with(event: Event, state_dir: Path, notifier: Notifier) -> bool:
    return queue_event(event, state_dir, notifier.settings())


@hookimpl
def svc_event(event: Event) -> None:
    if event.name not in ("job.status_changed", "workflow_run.status_changed", "sweep_run.status_changed"):
        return
    if RUNNING:
        for state_dir, notifier in list(RUNNING.items()):
            notifier.enqueue(functools.partial(_queue_with, event, state_dir, notifier))
        return
    from svc_host.plugin import SvcPaths

    paths = SvcPaths.from_env()
    queue_event(event, paths.state_dir, settings_for(paths))


@hookimpl
def svc_settings() -> type[BaseModel]:
    from svc_plugin_chat.settings import ChatConfig

    return ChatConfig


@hookimpl
def svc_background_tasks(host: PluginHost) -> list[TaskSpec]:
    from svc_plugin_chat.delivery import Notifier
    from svc_plugin_chat.outbox import Outbox

    async def is_workflow_job(transport: str, job_id: str) -> bool:
        record = await host.find_job(transport, job_id)
        return record is not None and record.source == "workflow"

    notifier = Notifier(
        Outbox(host.paths.state_dir), lambda: settings_for(host.paths, read_env=host.read_env), is_workflow_job
    )

    async def deliver() -> None:
        RUNNING[host.paths.state_dir] = notifier
        try:
            await notifier.run()
        finally:
            if RUNNING.get(host.paths.state_dir) is notifier:
                del RUNNING[host.paths.state_dir]

    return [TaskSpec(name="chat-outbox", run=deliver)]


@hookimpl
def svc_health(paths: SvcPaths) -> HealthReport:
    import time

    from svc_host.plugin import ConfigError

    from svc_plugin_chat.outbox import Outbox
    from svc_plugin_chat.settings import format_for, redact, validate_url

    stats = Outbox(paths.state_dir).stats()
    try:
        settings = settings_for(paths)
        url = validate_url(settings.url, settings.allow_http_hosts) if settings.url else None
    except ConfigError as exc:
        return HealthReport(ok=False, summary=f"not sending: {exc}")
    if url is None:
        waiting = f"; {stats.pending} messages kept" if stats and stats.pending else ""
        return HealthReport(ok=True, summary=f"off: no chat webhook URL set{waiting}")
    where = f"{redact(url)} ({format_for(url, settings.format)})"
    if stats is None:
        return HealthReport(ok=True, summary=f"{where}: nothing sent yet")
    stuck = stats.oldest_pending_at is not None and time.time() - stats.oldest_pending_at > STUCK_SECONDS
    summary = f"{where}: {stats.delivered} delivered, {stats.pending} waiting, {stats.dead} refused"
    if stats.last_error and (stats.pending or stats.dead):
        summary += f"; last error: {stats.last_error}"
    details = {
        "delivered": stats.delivered,
        "waiting": stats.pending,
        "refused": stats.dead,
        "outbox": str(Outbox(paths.state_dir).path),
    }
    return HealthReport(ok=not stuck and stats.dead == 0, summary=summary, details=details)
