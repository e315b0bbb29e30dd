"""The one family of expected failures; every interface maps it to its own error shape in one place."""

from __future__ import annotations

from collections.abc import Sequence


class SvcError(Exception):
    """An expected failure with a message that names the object and the fix."""


class ConfigError(SvcError):
    """Invalid or unreadable configuration."""


class PluginError(SvcError):
    """A plugin could not be loaded, conflicts with another, or a name is unknown."""


class RenderError(SvcError):
    """A job script could not be rendered from its definition."""


class SlurmParseError(SvcError):
    """Scheduler output did not have the expected shape."""


class TransportError(SvcError):
    """A scheduler command failed; carries the argv, the exit code and the tail of stderr."""

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
        if self.stderr_tail.strip():
            detail += f": {self.stderr_tail.strip().splitlines()[-1]}"
        super().__init__(detail)
