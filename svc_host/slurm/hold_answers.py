"""What ``scontrol uhold`` / ``scontrol release`` said of each id or range it was given, one line each on stderr.

Slurm 24.11 answers an array some of whose tasks ended with ``416_0: Job has already finished`` next to
``416_1-3: No error`` for the tasks it did hold (errno 0 spelled out), and exits 1; 22.05 says ``Job has already
finished for job 3764``. A task that ended meanwhile is nothing to hold or release, and "No error" is a success:
only the other lines are failures (a sweep's pause must not fail, nor say "scontrol failed ... No error")."""

from __future__ import annotations

_DONE_WORDS = ("no error", "already finished", "already completed")
"""A line saying one of these is not a failure: held (released), or ended before the command."""


def hold_failures(stderr: str) -> list[str]:
    """The lines of scontrol's stderr that report a real failure, in order; none when every id was held
    (released) or had ended."""
    return [
        line.strip()
        for line in stderr.splitlines()
        if line.strip() and not any(words in line.lower() for words in _DONE_WORDS)
    ]
