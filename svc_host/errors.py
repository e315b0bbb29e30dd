"""The one family of expected failures; every interface maps it to its own error shape in one place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal


class SvcError(Exception):
    """An expected failure with a message that names the object and the fix. ``fields``: each problem as
    ``{field, message}`` in words, when a request was checked field by field (the REST error then carries them as
    ``errors``, and the dashboard shows each next to its field)."""

    def __init__(self, message: str = "", *, fields: Sequence[Mapping[str, str]] = ()) -> None:
        super().__init__(message)
        self.fields = [dict(item) for item in fields]


class ConfigError(SvcError):
    """Invalid or unreadable configuration."""


class PluginError(SvcError):
    """A plugin could not be loaded, conflicts with another, or a name is unknown."""


class RenderError(SvcError):
    """A job script could not be rendered from its definition."""


class SlurmParseError(SvcError):
    """Scheduler output did not have the expected shape."""


class CommandError(SvcError):
    """A command failed; carries the argv, the exit code and the tail of stderr (its last lines end the message)."""

    tail_lines = 1

    def __init__(
        self,
        message: str,
        *,
        argv: Sequence[str] = (),
        exit_code: int | None = None,
        stderr: str = "",
    ) -> None:
        self.argv = list(argv)
        self.exit_code = exit_code
        self.stderr_tail = stderr[-2000:]
        detail = message
        if exit_code is not None:
            detail += f" (exit {exit_code})"
        tail = [line.strip() for line in self.stderr_tail.splitlines() if line.strip()][-self.tail_lines :]
        if tail:
            detail += ": " + " | ".join(tail)
        super().__init__(detail)


class TransportError(CommandError):
    """A scheduler command failed (or could not be run at all)."""


class OutcomeUnknownError(TransportError):
    """A command may or may not have taken effect: it timed out, or the connection dropped while it ran.

    Transports raise it instead of running a non-idempotent command (``sbatch``) a second time;
    ``timed_out`` tells a timeout from a lost connection.
    """

    def __init__(self, message: str, *, argv: Sequence[str] = (), timed_out: bool = False) -> None:
        super().__init__(message, argv=argv)
        self.timed_out = timed_out


class SyncError(CommandError):
    """A mount could not be synced or inspected.

    ``remedy`` names the flag of ``sync`` that would let the same request through when the refusal is one the
    user may override: ``"force"`` (another machine synced the mount last) or ``"adopt"`` (a first mirror into a
    directory holding files svc never synced); None otherwise. REST answers it beside ``detail``.
    """

    tail_lines = 3

    def __init__(
        self,
        message: str,
        *,
        argv: Sequence[str] = (),
        exit_code: int | None = None,
        stderr: str = "",
        remedy: Literal["force", "adopt"] | None = None,
    ) -> None:
        super().__init__(message, argv=argv, exit_code=exit_code, stderr=stderr)
        self.remedy = remedy


class StoreFullError(SvcError):
    """The disk holding the store is full: the transaction was rolled back, nothing of it was written."""


class NotFoundError(SvcError):
    """The named job, profile, mount, workflow or run does not exist."""


class UnknownTransportError(PluginError, NotFoundError):
    """No transport of that name is on offer (``PluginHost.transport``, ``Host.transport``). A ``NotFoundError``,
    as for any profile that does not exist (REST 404, the spec's "resource not found ... profile"), and still a
    ``PluginError`` (the plugins offer the names), so code that caught it as one goes on working."""


class ConflictError(SvcError):
    """Something with that name already exists."""


class InvalidRequestError(SvcError):
    """The request is well-formed but not acceptable (e.g. a negative job id, no active profile)."""


class InvalidStateError(SvcError):
    """The object is in a state that does not allow this (e.g. cancelling a finished run)."""


class AuthenticationError(SvcError):
    """The request did not carry the server's API token."""


class NotConfiguredError(SvcError):
    """The server has no SSH profile (or tool) for this operation."""


class WorkflowError(SvcError):
    """A workflow file or request is invalid; ``problems`` lists every problem found, each with its location.

    One problem is the whole message; several are counted and joined with ``; ``.
    """

    def __init__(self, problems: Sequence[str], *, subject: str = "workflow") -> None:
        self.problems = list(problems) or ["invalid workflow"]
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = f"{subject} has {len(self.problems)} problems: " + "; ".join(self.problems)
        super().__init__(message)
