"""Posting one message (blocking, for a worker thread) and the server's delivery loop over the outbox."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from svc_host.plugin import ConfigError

from svc_plugin_chat.messages import payload_for
from svc_plugin_chat.outbox import Outbox, Pending
from svc_plugin_chat.settings import ChatSettings, format_for, redact, validate_url

log = logging.getLogger(__name__)

POLL_SECONDS = 2.0
"""How often the loop looks for messages queued by other processes (a CLI command driving its own run)."""


class DeliveryError(Exception):
    """A post that did not succeed; ``retryable`` says whether trying again later can help."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A webhook that redirects is misconfigured; following it could leave https or the allowed hosts."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def post_json(url: str, payload: dict[str, Any], timeout: float) -> None:
    """POST ``payload`` to ``url``; 2xx is success, 408/429/5xx and network failures are retryable."""
    request = urllib.request.Request(  # noqa: S310 - the URL was checked by validate_url (https or allowed http)
        url,
        data=json.dumps(payload).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "svc-plugin-chat"},
    )
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            response.read(65536)
    except urllib.error.HTTPError as exc:
        raise DeliveryError(f"HTTP {exc.code}", retryable=exc.code in (408, 429) or exc.code >= 500) from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise DeliveryError(f"{redact(url)} unreachable: {reason}", retryable=True) from None


def backoff(attempts: int, settings: ChatSettings) -> float:
    """Seconds before try number ``attempts + 1``: doubling from ``retry_seconds`` up to the maximum."""
    return float(min(settings.retry_seconds * 2 ** max(attempts - 1, 0), settings.retry_max_seconds))


class Notifier:
    """Delivers one outbox, in order, from a server's background task; never blocks the event loop."""

    def __init__(
        self,
        outbox: Outbox,
        settings: Callable[[], ChatSettings],
        is_workflow_job: Callable[[str, str], Awaitable[bool]],
    ) -> None:
        self.outbox = outbox
        self.settings = settings
        self.is_workflow_job = is_workflow_job
        self._wake = asyncio.Event()
        self._pending_adds: set[asyncio.Task[None]] = set()
        self._adding = asyncio.Lock()  # FIFO: messages enter the outbox in the order their events came

    def wake(self) -> None:
        self._wake.set()

    def enqueue(self, add: Callable[[], object]) -> None:
        """Run the blocking ``add`` (config read + insert) in a worker thread, then wake the loop."""

        async def _add() -> None:
            async with self._adding:
                try:
                    await asyncio.to_thread(add)
                except Exception:  # an observer must never raise into the host
                    log.exception("chat notification could not be queued")
            self.wake()

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # emitted from a worker thread: no loop to hand it to, so write it here
            add()
            return
        task = loop.create_task(_add())
        self._pending_adds.add(task)
        task.add_done_callback(self._pending_adds.discard)

    async def run(self) -> None:
        """Deliver until cancelled."""
        while True:
            try:
                wait = await self.deliver_due()
            except Exception:  # a bug in one round must not end notifications for the server's lifetime
                log.exception("chat delivery round failed")
                wait = POLL_SECONDS
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=min(wait, POLL_SECONDS))

    async def deliver_due(self) -> float:
        """Send every due message in order; the seconds until the next one is due (or the poll interval)."""
        while True:
            try:
                settings = await asyncio.to_thread(self.settings)
                if settings.url is None:
                    return POLL_SECONDS
                url = validate_url(settings.url, settings.allow_http_hosts)
            except ConfigError as exc:
                log.warning("chat notifications paused: %s", exc)
                return POLL_SECONDS
            pending, wait = await asyncio.to_thread(self.outbox.claim_head, lease_seconds=settings.timeout_seconds + 30)
            if pending is None:
                return POLL_SECONDS if wait is None else wait
            await self._deliver(pending, url, settings)

    async def _deliver(self, pending: Pending, url: str, settings: ChatSettings) -> None:
        message = pending.message
        if message.job is not None and await self.is_workflow_job(*message.job):
            await asyncio.to_thread(self.outbox.discard, pending.id)  # its run's (or sweep's) message says it
            return
        payload = payload_for(message, format_for(url, settings.format))
        try:
            await asyncio.to_thread(post_json, url, payload, settings.timeout_seconds)
        except DeliveryError as exc:
            if exc.retryable:
                delay = backoff(pending.attempts + 1, settings)
                log.warning("chat message %s not delivered (%s); retrying in %.1fs", message.key, exc, delay)
                await asyncio.to_thread(self.outbox.retry_later, pending.id, str(exc), delay)
            else:
                log.error("chat message %s refused (%s); kept in the outbox, not retried", message.key, exc)
                await asyncio.to_thread(self.outbox.give_up, pending.id, str(exc))
            return
        await asyncio.to_thread(self.outbox.delivered, pending.id)
