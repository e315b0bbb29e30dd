"""Small pure formatters shared by the CLI, REST and MCP."""

from __future__ import annotations


def clock(seconds: int | None) -> str:
    """Seconds as ``H:MM:SS`` (hours grow past 24), the REST spec's elapsed_time form; ``""`` when unknown."""
    if seconds is None:
        return ""
    hours, rest = divmod(max(0, seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
