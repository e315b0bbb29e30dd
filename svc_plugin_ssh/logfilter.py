"""Keep profile env values out of logs: asyncssh logs every command line at INFO, ``env -- K=V`` prefix included."""

from __future__ import annotations

import logging
import shlex

from svc_host.plugin import REDACTED

_COMMAND = "Command: %s"


def hide_env_values(line: str) -> str:
    """``env -- A=1 B=2 cmd ...`` -> ``env -- A=<redacted> B=<redacted> cmd ...``; other lines unchanged."""
    try:
        words = shlex.split(line)
    except ValueError:
        return line
    if words[:2] != ["env", "--"]:
        return line
    shown = ["env", "--"]
    for index, word in enumerate(words[2:], start=2):
        name, sep, _ = word.partition("=")
        if not sep:
            return shlex.join([*shown, *words[index:]])
        shown.append(f"{name}={REDACTED}")
    return shlex.join(shown)


class HideEnvValues(logging.Filter):
    """A filter for the ``asyncssh`` logger that rewrites its command lines with :func:`hide_env_values`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.endswith(_COMMAND) and isinstance(record.args, tuple):
            record.args = tuple(hide_env_values(arg) if isinstance(arg, str) else arg for arg in record.args)
        return True


def install() -> None:
    """Add the filter to asyncssh's logger once per process."""
    target = logging.getLogger("asyncssh")
    if not any(isinstance(existing, HideEnvValues) for existing in target.filters):
        target.addFilter(HideEnvValues())
