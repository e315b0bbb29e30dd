"""The one table that turns Slurm's job states into svc's canonical :class:`JobState`.

squeue ``%T``, sacct ``State`` and scontrol ``JobState`` print long names (``RUNNING``,
``CANCELLED by 1001``, ``CANCELLED+`` when sacct truncates), squeue ``%t`` prints short codes
(``R``, ``CA``). Both spellings of every state sit side by side in :data:`SLURM_STATES`.

Choices that are not one-to-one, and why:

* ``COMPLETING`` -> RUNNING: the job's processes are being cleaned up; it is not terminal yet and
  its exit code is not final.
* ``CONFIGURING``, ``POWER_UP_NODE`` -> PENDING: nodes are allocated but booting; nothing of
  the job runs yet.
* ``REQUEUED``, ``REQUEUE_HOLD``, ``REQUEUE_FED``, ``RESV_DEL_HOLD`` -> PENDING: the job goes back
  into the queue (held or not) and will run again.
* ``RESIZING``, ``SIGNALING``, ``STAGE_OUT``, ``UPDATE_DB`` -> RUNNING: transient flags on a job
  that still holds its allocation.
* ``STOPPED`` -> SUSPENDED: processes got SIGSTOP but keep their nodes.
* ``SPECIAL_EXIT`` -> FAILED: the job exited with the site's special exit value and was held.
* ``REVOKED`` -> CANCELLED: a federated sibling was removed because another cluster ran the job.
"""

from __future__ import annotations

import functools
import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from svc_host.domain.jobs import JobState
from svc_host.errors import SlurmParseError

if TYPE_CHECKING:
    from collections.abc import Mapping

_S = JobState

# fmt: off
SLURM_STATES: Final[Mapping[str, JobState]] = MappingProxyType(
    {
        # long name                         short code (squeue %t)
        "PENDING": _S.PENDING,              "PD": _S.PENDING,
        "CONFIGURING": _S.PENDING,          "CF": _S.PENDING,
        "POWER_UP_NODE": _S.PENDING,
        "REQUEUED": _S.PENDING,             "RQ": _S.PENDING,
        "REQUEUE_HOLD": _S.PENDING,         "RH": _S.PENDING,
        "REQUEUE_FED": _S.PENDING,          "RF": _S.PENDING,
        "RESV_DEL_HOLD": _S.PENDING,        "RD": _S.PENDING,
        "RUNNING": _S.RUNNING,              "R": _S.RUNNING,
        "COMPLETING": _S.RUNNING,           "CG": _S.RUNNING,
        "RESIZING": _S.RUNNING,             "RS": _S.RUNNING,
        "SIGNALING": _S.RUNNING,            "SI": _S.RUNNING,
        "STAGE_OUT": _S.RUNNING,            "SO": _S.RUNNING,
        "UPDATE_DB": _S.RUNNING,
        "SUSPENDED": _S.SUSPENDED,          "S": _S.SUSPENDED,
        "STOPPED": _S.SUSPENDED,            "ST": _S.SUSPENDED,
        "COMPLETED": _S.COMPLETED,          "CD": _S.COMPLETED,
        "FAILED": _S.FAILED,                "F": _S.FAILED,
        "SPECIAL_EXIT": _S.FAILED,          "SE": _S.FAILED,
        "CANCELLED": _S.CANCELLED,          "CA": _S.CANCELLED,
        "REVOKED": _S.CANCELLED,            "RV": _S.CANCELLED,
        "TIMEOUT": _S.TIMEOUT,              "TO": _S.TIMEOUT,
        "OUT_OF_MEMORY": _S.OUT_OF_MEMORY,  "OOM": _S.OUT_OF_MEMORY,
        "NODE_FAIL": _S.NODE_FAIL,          "NF": _S.NODE_FAIL,
        "PREEMPTED": _S.PREEMPTED,          "PR": _S.PREEMPTED,
        "BOOT_FAIL": _S.BOOT_FAIL,          "BF": _S.BOOT_FAIL,
        "DEADLINE": _S.DEADLINE,            "DL": _S.DEADLINE,
    }
)
# fmt: on
"""Every Slurm job state, long name and short code, mapped to one canonical state."""


@functools.lru_cache(maxsize=1024)  # pure, and a queue repeats the same few states
def normalize_state(raw: str) -> JobState:
    """Map any Slurm job state to svc's canonical state; anything unrecognised is UNKNOWN.

    Case and surrounding whitespace are ignored, as are the ``by <uid>`` tail of sacct's
    ``CANCELLED by 1001`` and the ``+`` sacct appends when it truncates a column.

    >>> normalize_state("CANCELLED by 1001")
    <JobState.CANCELLED: 'CANCELLED'>
    >>> normalize_state("cg")
    <JobState.RUNNING: 'RUNNING'>
    """
    words = raw.split()
    if not words:
        return JobState.UNKNOWN
    return SLURM_STATES.get(words[0].upper().rstrip("+"), JobState.UNKNOWN)


_EXIT_CODE = re.compile(r"(?P<code>\d+)(?::(?P<signal>\d+))?")


def parse_exit_code(text: str) -> tuple[int | None, int | None]:
    """Split Slurm's ``<exit code>:<signal>`` (sacct ``ExitCode``, scontrol ``ExitCode=``).

    ``3:0`` is ``(3, 0)``: the script exited with 3. ``0:9`` is ``(0, 9)``: it was killed by
    SIGKILL. Empty text (a job that has not ended in some sources) is ``(None, None)``.

    Raises:
        SlurmParseError: the text is neither empty nor of that form.
    """
    text = text.strip()
    if not text or text.upper() == "N/A":
        return None, None
    match = _EXIT_CODE.fullmatch(text)
    if match is None:
        msg = f"unexpected exit code {text!r}: expected '<code>:<signal>' such as '3:0'"
        raise SlurmParseError(msg)
    signal = match["signal"]
    return int(match["code"]), int(signal) if signal is not None else None
