"""Logs of jobs svc did not submit: read only from files the job's own user owns.

svc records the log paths of the jobs it submits. For any other job the paths are the scheduler's word, chosen by
whoever submitted it: another user's job may name the svc user's own 0600 file (``--output ~svcuser/.ssh/id_rsa``),
and svc, reading as that user, would hand the file to the dashboard or to an agent as that job's "log". Slurm
writes a job's logs as the job's user, so a real log is a file that user owns (and a log of the user's own job is
theirs). The owner is asked on the cluster, the path's symlinks followed (``stat -L``), just before the read; a
user who swaps the file for a symlink between that question and the read could still win the race, which is why
this is a check on top of Unix permissions, not a replacement for them.
"""

from __future__ import annotations

from svc_host.errors import InvalidRequestError
from svc_host.settings.mounts import PathForbiddenError
from svc_host.transports.base import SlurmTransport, Transport


def owner_argv(path: str) -> list[str]:
    """The user name owning what ``path`` leads to and its kind ("regular file", "character special file"...),
    one line: GNU ``stat``; ``--`` so a path cannot be an option."""
    return ["stat", "-L", "--format=%U %F", "--", path]


def not_a_log_file(job_id: str, path: str, kind: str) -> InvalidRequestError:
    """The one answer for a job whose log is not a regular file (``sbatch -o /dev/null``), whoever owns it: the
    spec's 400 "path not a file", on every cluster (it was a 502 on one and a 403 on another)."""
    return InvalidRequestError(
        f"job {job_id} writes its log to {path}, which is not a regular file ({kind}); there is no log to read"
    )


async def check_log_owner(target: Transport, path: str, job_id: str, job_user: str | None) -> bool:
    """True when ``path`` exists and ``job_user`` owns it; False when it does not exist (yet).
    ``InvalidRequestError`` (``not_a_log_file``) when it is not a regular file; ``PathForbiddenError`` when
    someone else owns it, or when the owner cannot be known."""
    if job_user is None or not isinstance(target, SlurmTransport):
        raise PathForbiddenError(
            f"job {job_id} was not submitted by svc and its owner or its log's owner cannot be known on transport "
            f"{target.name!r}; read its log on the cluster"
        )
    result = await target.run(owner_argv(path), timeout=30)
    if result.exit_code != 0:
        return False
    owner, _, kind = result.stdout.strip().partition(" ")
    if not kind.startswith("regular"):  # "regular file", "regular empty file"
        raise not_a_log_file(job_id, path, kind)
    if owner != job_user:
        raise PathForbiddenError(
            f"the log of job {job_id} (user {job_user}) names a file {job_user} does not own; svc reads the logs of "
            "jobs it did not submit only from files of the job's own user"
        )
    return True
