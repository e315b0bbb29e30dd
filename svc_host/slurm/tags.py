"""Submission tags: how svc finds a job whose ``sbatch`` answer was lost (pure).

A submission carries a ``--comment`` that names it uniquely: ``svc:<uuid>`` given on sbatch's command line,
or a marker of svc's that the script already sets (``#SBATCH --comment=svc-wf:<run>:<job>:<attempt>`` from
the workflow engine). When the connection drops or sbatch times out, the job may exist anyway; listing the
user's jobs with their comments (:func:`lookup_argv`) tells. Slurm keeps a comment while the job is pending
or running and for ``MinJobAge`` (300 s by default) after it ends, far longer than a lookup takes.

A script that sets a comment of its own that is not svc's keeps it (the command line would override it); such
a submission has no tag and cannot be looked up.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from svc_host.slurm.argv import DELIMITER

TAG_PREFIX = "svc"
"""Every comment svc sets starts with this (``svc:``, ``svc-wf:``)."""

_DIRECTIVE = re.compile(r"#(?:SBATCH|SLURM)\s")
_SVC_WORD = re.compile(rf"{TAG_PREFIX}[-:][A-Za-z0-9_.:/@+=-]+")


@dataclass(frozen=True)
class SubmissionTag:
    """The tag of one submission: ``value`` to look up (None: untaggable), and whether sbatch must be given it."""

    value: str | None
    on_command_line: bool


def tag_for(script: str) -> SubmissionTag:
    """The tag of submitting ``script``: its own svc marker, none when it sets a foreign comment, else a new one."""
    found = script_comment(script)
    if found is None:
        return SubmissionTag(value=f"{TAG_PREFIX}:{uuid.uuid4()}", on_command_line=True)
    return SubmissionTag(value=found if _SVC_WORD.fullmatch(found) else None, on_command_line=False)


def script_comment(script: str) -> str | None:
    """The value of the last ``--comment`` of the script's leading directive block, or None when it sets none.

    The block ends at the first line that is neither blank nor a comment, as sbatch reads it. Words are split
    on whitespace: a quoted comment comes back with its quote, which is never one of svc's plain-word tags.
    """
    found: str | None = None
    lines = script.split("\n")
    for line in lines[1:] if script.startswith("#!") else lines:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if not _DIRECTIVE.match(line + " "):
            continue
        words = line.split()[1:]
        for index, word in enumerate(words):
            if word.startswith("#"):
                break
            if word.startswith("--comment="):
                found = word.partition("=")[2]
            elif word == "--comment":
                found = words[index + 1] if index + 1 < len(words) else ""
    return found


def lookup_argv() -> list[str]:
    """squeue listing the base job id and the comment of every job of the calling user that slurmctld holds."""
    return ["squeue", "--noheader", "--all", "--me", "--states=all", f"--Format=ArrayJobID:0{DELIMITER},Comment:0"]


def find_tagged(output: str, tag: str) -> str | None:
    """The job id carrying ``tag`` in :func:`lookup_argv` output (the newest if several), or None."""
    found: list[int] = []
    for line in output.splitlines():
        job_id, sep, comment = line.strip().partition(DELIMITER)
        if sep and comment.strip() == tag and job_id.strip().isdigit():
            found.append(int(job_id.strip()))
    return str(max(found)) if found else None
