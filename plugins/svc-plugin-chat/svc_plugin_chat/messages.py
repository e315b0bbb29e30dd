"""Pure: a status-change event to a chat message, and a message to each chat service's JSON shape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from svc_host.plugin import Event

from svc_plugin_chat.rules import Rule
from svc_plugin_chat.settings import ChatFormat

GOOD = {"COMPLETED", "completed"}
NEUTRAL = {"CANCELLED", "cancelled", "PREEMPTED"}


@dataclass(frozen=True)
class Message:
    """One chat message. ``key`` names the change (one message per change, however often it is emitted);
    ``job`` is ``(transport, job_id)`` for job messages, so a workflow's own jobs can be left to their run."""

    key: str
    title: str
    text: str
    outcome: str  # "success", "failure" or "neutral": the colour/emoji of the message
    job: tuple[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        job = data.get("job")
        return cls(
            key=data["key"],
            title=data["title"],
            text=data["text"],
            outcome=data["outcome"],
            job=(str(job[0]), str(job[1])) if job else None,
        )


def message_for(event: Event, rules: tuple[Rule, ...]) -> Message | None:
    """The message ``event`` deserves under ``rules``, or None (including every sweep cell's own run)."""
    p = event.payload
    to_state = str(p.get("to", ""))
    if event.name == "workflow_run.status_changed" and p.get("sweep_id") is not None:
        return None  # one summary per sweep, never one message per cell
    if not any(rule.matches(event.name, to_state) for rule in rules):
        return None
    outcome = "success" if to_state in GOOD else "neutral" if to_state in NEUTRAL else "failure"
    if event.name == "job.status_changed":
        exit_code = p.get("exit_code")
        detail = f", exit code {exit_code}" if exit_code not in (None, 0) else ""
        return Message(
            key=f"job:{p.get('transport')}:{p.get('job_id')}:{to_state}",
            title=f"Job {p.get('job_id')} {to_state}",
            text=f"Job {p.get('job_id')} ({p.get('name')}) on {p.get('transport')} ended {to_state}{detail}.",
            outcome=outcome,
            job=(str(p.get("transport")), str(p.get("job_id"))),
        )
    if event.name == "workflow_run.status_changed":
        error = f": {p['error']}" if p.get("error") else ""
        return Message(
            key=f"workflow_run:{p.get('id')}:{to_state}",
            title=f"Workflow run {to_state}",
            text=f"Workflow run {p.get('id')} ({p.get('workflow_name')}) {to_state}{error}.",
            outcome=outcome,
        )
    if event.name == "sweep_run.status_changed":
        counts = ", ".join(
            f"{p.get(f'cells_{what}', 0)} {what}" for what in ("completed", "failed", "cancelled", "running", "pending")
        )
        return Message(
            key=f"sweep_run:{p.get('id')}:{to_state}",
            title=f"Sweep {to_state}",
            text=f"Sweep {p.get('id')} ({p.get('name')}) {to_state}: {p.get('cell_count', 0)} cells, {counts}.",
            outcome=outcome,
        )
    return None


EMOJI = {"success": ":white_check_mark:", "failure": ":x:", "neutral": ":warning:"}
COLOUR = {"success": "2EB67D", "failure": "E01E5A", "neutral": "ECB22E"}


_MARKDOWN = str.maketrans({char: "\\" + char for char in "\\`*_~[]()<>#|!"})
_SLACK = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ZERO_WIDTH_SPACE = "\u200b"


def escape(text: str, fmt: ChatFormat) -> str:
    """``text`` (job and workflow names, errors: anyone's words) shown literally by ``fmt``'s service.

    Slack reads ``<!channel>``, ``<@U123>`` and ``<url|label>`` as mentions and links: ``&<>`` become entities,
    as Slack asks. The others read Markdown, so a ``[label](url)`` link or ``*emphasis*`` is backslash-escaped;
    Mattermost also pings on ``@channel``/``@all``/``@name``, so a zero-width space follows each ``@``
    (Discord's pings are off through ``allowed_mentions``).
    """
    if fmt == "slack":
        return text.translate(_SLACK)
    escaped = text.translate(_MARKDOWN)
    return escaped.replace("@", "@" + _ZERO_WIDTH_SPACE) if fmt == "mattermost" else escaped


def payload_for(message: Message, fmt: ChatFormat) -> dict[str, Any]:
    """The JSON body each service's incoming webhook expects, every word of the message escaped for it."""
    text, title = escape(message.text, fmt), escape(message.title, fmt)
    line = f"{EMOJI[message.outcome]} svc: {text}"
    if fmt == "discord":
        return {"content": f"svc: {text}"[:2000], "allowed_mentions": {"parse": []}}
    if fmt == "teams":
        return {
            "@type": "MessageCard",
            "@context": "https://schema.org/extensions",
            "summary": message.title,
            "themeColor": COLOUR[message.outcome],
            "title": f"svc: {title}",
            "text": text,
        }
    if fmt == "mattermost":
        return {"text": line, "username": "svc"}
    return {"text": line}
