"""The transport contract: how the host talks to one Slurm cluster.

``Transport`` is what the host calls. ``SlurmTransport`` implements it with the pure argv builders and
parsers of ``svc_host.slurm`` on top of two primitives, ``run(argv)`` and ``read_bytes(path)``, so a
transport plugin only says how a command runs and how a file is read (locally, over SSH, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from svc_host.concurrency.single_flight import SingleFlight
from svc_host.domain.jobs import JobState, JobStatus
from svc_host.domain.resources import NodeInfo, ResourceSnapshot
from svc_host.errors import OutcomeUnknownError, TransportError
from svc_host.slurm import answers, arrays, parse, tags
from svc_host.slurm import argv as slurm_argv
from svc_host.slurm.hold_answers import hold_failures
from svc_host.slurm.resources import summarize, summarize_cluster
from svc_host.slurm.usage import parse_sacct_usage
from svc_host.transports.overrides import adapt_overrides

if TYPE_CHECKING:
    from svc_host.domain.submission import RenderedScript
    from svc_host.domain.usage import JobUsage
    from svc_host.transports.streams import ByteReader, ByteWriter

log = logging.getLogger(__name__)

LOG_CHUNK_LIMIT = 256 * 1024
"""Default and maximum bytes of one log read."""


@dataclass(frozen=True)
class CommandResult:
    """What one command printed and how it exited."""

    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class BytesResult:
    """What one command of ``SlurmTransport.run_bytes`` printed (its stdout as bytes) and how it exited."""

    argv: list[str]
    exit_code: int
    stdout: bytes
    stderr: str


class LogChunk(BaseModel):
    """A slice of a log file: text from ``offset`` and where to continue reading."""

    path: str
    content: str
    offset: int
    next_offset: int
    size: int | None
    """File size at read time; ``None`` when the file does not exist (yet)."""

    @property
    def exists(self) -> bool:
        return self.size is not None


class Transport(ABC):
    """One Slurm cluster as the host sees it. Every method is a coroutine and batches its queries."""

    name: str

    ADDED_KEYWORDS: ClassVar[Mapping[str, tuple[str, ...]]] = {"run": ("idempotent",)}
    """Keyword arguments svc passes to methods a subclass overrides, added in plugin API 1.0: an override that does
    not declare them is called without them (``svc_host.transports.overrides``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        adapt_overrides(cls, Transport.ADDED_KEYWORDS, since="1.0")

    @abstractmethod
    async def submit(self, script: RenderedScript) -> str:
        """Create the log directory, submit ``script`` and return the scheduler's job id."""

    @abstractmethod
    async def queue(self, *, user: str | None = None) -> list[JobStatus]:
        """Jobs currently in the queue (pending and running), optionally of one user."""

    @abstractmethod
    async def statuses(self, job_ids: Sequence[str]) -> dict[str, JobStatus]:
        """The status of many jobs in at most two scheduler commands. Ids the scheduler does not know
        (yet) are absent from the result rather than reported as failed."""

    @abstractmethod
    async def describe(self, job_id: str) -> JobStatus | None:
        """Everything the scheduler still knows about one job (log paths included), or ``None``."""

    @abstractmethod
    async def cancel(self, job_ids: Sequence[str]) -> None:
        """Cancel pending or running jobs."""

    async def hold(self, job_ids: Sequence[str], *, release: bool = False) -> None:
        """Hold pending jobs (they stay queued, not started), or ``release`` them; an array's id stands for its
        pending tasks. Running jobs are not affected. A transport that cannot hold jobs raises
        ``TransportError`` (a sweep is then paused without holding what is queued)."""
        raise TransportError(f"transport {self.name!r} cannot hold or release jobs")

    @abstractmethod
    async def read_log(self, path: str, *, offset: int = 0, limit: int = LOG_CHUNK_LIMIT) -> LogChunk:
        """Read a log file from a byte offset, at most ``limit`` bytes."""

    @abstractmethod
    async def resources(self, partition: str | None = None) -> list[ResourceSnapshot]:
        """GPU and node availability per partition (one snapshot when ``partition`` is given)."""

    @abstractmethod
    async def resources_total(self) -> ResourceSnapshot:
        """Availability of the whole cluster, each node counted once (partition ``all``)."""

    async def usage(self, job_ids: Sequence[str]) -> dict[str, JobUsage]:
        """What ended jobs were given and used, from accounting, in one scheduler command; ids accounting does not
        know (yet) are absent. A transport without accounting returns nothing."""
        return {}

    async def user(self) -> str | None:
        """The login this transport's jobs run under on the cluster (whose queue is "my jobs"), or ``None``
        when the transport cannot tell."""
        return None

    def pooled(self, size: int) -> AbstractAsyncContextManager[Transport]:
        """A transport for a burst of concurrent work (a sweep) using at most ``size`` sessions, released
        when the context exits. Transports without sessions return themselves."""
        return contextlib.nullcontext(self)

    async def connect(self) -> None:  # noqa: B027 - optional hook, most transports hold nothing
        """Open what the transport holds (a connection) ahead of its first command, e.g. while the CLI opens
        the store; failures are left to that command, which reports them."""

    async def close(self) -> None:  # noqa: B027 - optional hook, most transports hold nothing
        """Release connections; the transport may be used again afterwards (it reconnects)."""

    async def open_tcp(self, host: str, port: int) -> tuple[ByteReader, ByteWriter]:
        """A TCP connection to ``host:port`` as the cluster sees it (a compute node's port, reached from the login
        node over SSH), as a reader and a writer like asyncio's streams; the session proxy's way in. Added in
        plugin API 1.1. A transport that cannot open connections raises ``TransportError``, as does one that
        cannot reach the target (naming it)."""
        raise TransportError(f"transport {self.name!r} cannot open connections (to {host}:{port})")


class SlurmTransport(Transport):
    """``Transport`` on top of Slurm's command-line tools; subclasses provide ``run`` and ``read_bytes``.

    A submission is never run twice blindly: ``sbatch`` runs with ``idempotent=False`` and a tag
    (:mod:`svc_host.slurm.tags`); when its outcome is unknown (timeout, lost connection) the tag is looked up
    every ``reconcile_delays`` seconds. A job found is the submission's; after a lost connection, a tag that
    stayed absent through every lookup means sbatch never reached the scheduler and it is sent once more
    (same tag); after a timeout it is an error naming the tag, since a slow scheduler may still accept it.
    """

    reconcile_delays: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0, 5.0)
    """Pauses before each lookup of a submission whose outcome is unknown (30 s in all)."""

    # SlurmTransport's own state is name-mangled (``__login`` is ``_SlurmTransport__login``): a subclass's
    # ``_login`` or ``_queries`` is its own and cannot change what ``user()`` answers.
    __login: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        run = cls.__dict__.get("run")
        if run is not None and inspect.iscoroutinefunction(run):
            setattr(cls, "run", _keeping_the_tag(run))  # noqa: B010 - mypy refuses assigning to a method

    async def close(self) -> None:
        """Cancel the shared queries still running; a subclass that holds a connection calls this, then closes it."""
        queries: SingleFlight[tuple[str, ...], CommandResult] | None = self.__dict__.get("_SlurmTransport__queries")
        if queries is not None:
            await queries.close()

    @functools.cached_property
    def __queries(self) -> SingleFlight[tuple[str, ...], CommandResult]:
        return SingleFlight()

    async def query(self, argv: Sequence[str]) -> CommandResult:
        """Run an idempotent command without stdin; identical commands running at the same time on this
        transport are one command (single flight), so concurrent clients cost the scheduler one query."""
        return await self.__queries.run(tuple(argv), lambda: self.run(argv))

    @abstractmethod
    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> CommandResult:
        """Run one command (an argv list, never a shell string) and return its result; raise
        ``TransportError`` only when the command could not be run at all (missing, timed out, no connection).

        A transport may run an ``idempotent`` command again after a dropped connection. It never runs a
        command with ``idempotent=False`` twice: when such a command may have started but its result is lost,
        or any command times out, it raises ``OutcomeUnknownError``."""

    async def run_bytes(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
    ) -> BytesResult:
        """``run`` for commands whose input or output is bytes (an archive, a file's exact content): the same rules
        (argv list, ``idempotent``, ``TransportError`` only when the command could not run). A sync backend runs
        its commands on the cluster with it, over the connection the transport already holds. The built-in
        transports have it; a transport without it raises ``TransportError``."""
        raise TransportError(f"transport {self.name!r} cannot run commands on bytes (it has no run_bytes)")

    @abstractmethod
    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        """Up to ``limit`` bytes of ``path`` from ``offset`` and the file's size, or ``None`` if it is missing."""

    async def user(self) -> str | None:
        """Asked once (``id -un`` on the cluster) and kept: the login cannot change under a transport."""
        if self.__login is None:
            self.__login = (await self.check(["id", "-un"])).strip() or None
        return self.__login

    async def login_dir(self) -> str:
        """The absolute directory commands start in: where sbatch runs a job that names no working directory (an
        SSH login's home directory). Asked with ``pwd``; transports holding a connection may keep the answer."""
        found = (await self.check(["pwd"])).strip()
        if not found.startswith("/"):
            raise TransportError(f"pwd on transport {self.name!r} did not print an absolute path: {found[:200]!r}")
        return found

    async def check(self, argv: Sequence[str], *, stdin: str | None = None, idempotent: bool = True) -> str:
        """Run a command and return its stdout; a non-zero exit raises ``TransportError``. Idempotent commands
        without stdin are shared with identical ones running at the same time (``query``)."""
        if stdin is None and idempotent:
            result = await self.query(argv)
        else:
            result = await self.run(argv, stdin=stdin, idempotent=idempotent)
        if result.exit_code != 0:
            raise TransportError(
                f"{slurm_argv.program(argv)} failed on transport {self.name!r}",
                argv=argv,
                exit_code=result.exit_code,
                stderr=result.stderr,
            )
        return result.stdout

    async def make_dir(self, path: str) -> None:
        """Create a directory and its parents on the cluster (``mkdir -p``); ``TransportError`` if it cannot."""
        await self.check(["mkdir", "-p", "--", path])

    async def submit(self, script: RenderedScript) -> str:
        await self.make_dir(script.log_dir)
        tag = tags.tag_for(script.text)
        argv = slurm_argv.sbatch_argv(comment=tag.value if tag.on_command_line else None)
        for attempt in (1, 2):
            try:
                submitting = _SUBMITTING.set(tag)
                try:
                    answer = await self.check(argv, stdin=script.text, idempotent=False)
                finally:
                    _SUBMITTING.reset(submitting)
                return parse.parse_sbatch(answer)
            except OutcomeUnknownError as exc:
                if tag.value is None:
                    raise TransportError(
                        f"{exc}; the script sets its own --comment, so svc cannot tell whether the job was "
                        "submitted: check squeue before submitting it again",
                        argv=argv,
                    ) from exc
                found = await self._reconcile(tag.value)
                if found is not None:
                    log.warning(
                        "sbatch on %s: %s; job %s carries tag %s: it was submitted", self.name, exc, found, tag.value
                    )
                    return found
                if exc.timed_out or attempt == 2:
                    raise TransportError(
                        f"{exc}; no job tagged {tag.value} appeared in {sum(self.reconcile_delays):.0f} s: it was "
                        "probably not submitted; check squeue --me -O JobID,Comment before submitting it again",
                        argv=argv,
                    ) from exc
                # a slow slurmctld may accept the first sbatch after all: one more look right before sending again
                found = await self._reconcile(tag.value, delays=(0.0,))
                if found is not None:
                    log.warning(
                        "sbatch on %s: %s; job %s tagged %s found right before sending sbatch again: not resent",
                        self.name, exc, found, tag.value,
                    )  # fmt: skip
                    return found
                log.warning(
                    "sbatch on %s: %s; no job tagged %s after %.0f s nor right before resending: submitting once more",
                    self.name, exc, tag.value, sum(self.reconcile_delays),
                )  # fmt: skip
        raise AssertionError("unreachable")

    async def _reconcile(self, tag: str, *, delays: Sequence[float] | None = None) -> str | None:
        """The id of the job tagged ``tag``, looked up after each of ``delays`` (``reconcile_delays``) until found;
        None when the lookups, the last one included, came back without it. ``TransportError`` when the last one
        failed."""
        failure: TransportError | None = None
        for delay in self.reconcile_delays if delays is None else delays:
            await asyncio.sleep(delay)
            try:
                result = await self.run(tags.lookup_argv())
            except TransportError as exc:
                failure = exc
                continue
            if result.exit_code != 0:
                failure = TransportError(
                    "squeue failed", argv=result.argv, exit_code=result.exit_code, stderr=result.stderr
                )
                continue
            failure = None
            found = tags.find_tagged(result.stdout, tag)
            if found is not None:
                return found
        if failure is not None:
            raise TransportError(
                f"whether submission {tag} reached the scheduler of {self.name!r} is unknown: {failure}; "
                "check squeue --me -O JobID,Comment before submitting it again"
            )
        return None

    @functools.cached_property
    def __queue_reader(self) -> parse.SqueueReader:
        return parse.SqueueReader()

    async def queue(self, *, user: str | None = None) -> list[JobStatus]:
        stdout = await self.check(slurm_argv.squeue_argv(user=user))
        # The whole queue is read every second or so (snapshots, the monitor): unchanged lines are not parsed again.
        return self.__queue_reader.parse(stdout) if user is None else parse.parse_squeue(stdout)

    async def statuses(self, job_ids: Sequence[str]) -> dict[str, JobStatus]:
        ids = list(dict.fromkeys(job_ids))
        if not ids:
            return {}
        found = {job.job_id: job for job in await self._squeue_jobs(ids)}
        settled = [job_id for job_id in ids if job_id not in found or found[job_id].state.is_terminal]
        if settled:
            for job in await self._finished_jobs(settled):
                if job.job_id in settled:
                    live = found.get(job.job_id)
                    # Right after the end sacct may still call the job "allocation"; squeue knows its name.
                    found[job.job_id] = job.model_copy(update={"name": live.name}) if live and live.name else job
        return {job_id: found[job_id] for job_id in ids if job_id in found}

    async def _squeue_jobs(self, ids: list[str]) -> list[JobStatus]:
        result = await self.query(slurm_argv.squeue_argv(ids))
        if result.exit_code != 0:
            # squeue refuses the whole list when it knows none of the ids; that just means "not live".
            if "invalid job id" in result.stderr.lower():
                return []
            raise TransportError("squeue failed", argv=result.argv, exit_code=result.exit_code, stderr=result.stderr)
        return parse.parse_squeue(result.stdout)

    async def _finished_jobs(self, ids: list[str]) -> list[JobStatus]:
        """Final states of ``ids`` from accounting; without it (disabled, or slurmdbd down) from slurmctld's memory
        (``scontrol``, with exit codes that squeue lacks). A job neither knows stays unknown, never failed.

        scontrol is asked for every job at once (one command for the monitor's whole batch), so its answer lists
        other jobs, other users' too: only the records about ``ids`` are kept (``answers.records_about``)."""
        result = await self.query(slurm_argv.sacct_argv(ids))
        if result.exit_code == 0:
            return answers.records_about(ids, parse.parse_sacct(result.stdout))
        log.warning("sacct failed on %s (exit %s): %s", self.name, result.exit_code, result.stderr.strip()[-300:])
        shown = await self.query(slurm_argv.scontrol_show_job_argv())
        if shown.exit_code == 0:
            return answers.records_about(ids, parse.parse_scontrol_jobs(shown.stdout))
        return []

    async def _never_started(self, job_id: str) -> JobStatus | None:
        """An array task cancelled while pending: accounting keeps it only inside a range of its array's tasks
        (``123_[4-9%2]``) or the array's own record (``123``: the tasks that never started), never by its id."""
        array = arrays.array_of(job_id)
        if array is None:
            return None
        records = await self._finished_jobs([array])
        held = answers.record_for(job_id, records) or next((job for job in records if job.job_id == array), None)
        return held.model_copy(update={"job_id": job_id}) if held is not None else None

    async def usage(self, job_ids: Sequence[str]) -> dict[str, JobUsage]:
        ids = list(dict.fromkeys(job_ids))
        if not ids:
            return {}
        result = await self.query(slurm_argv.sacct_usage_argv(ids))
        if result.exit_code != 0:
            log.warning("sacct failed on %s (exit %s): %s", self.name, result.exit_code, result.stderr.strip()[-300:])
            return {}
        found = parse_sacct_usage(result.stdout)
        return {job_id: found[job_id] for job_id in ids if job_id in found}

    async def describe(self, job_id: str) -> JobStatus | None:
        """The job ``job_id`` as scontrol, else accounting, else an array's records know it; every answer is
        filtered to the id asked (``answers.record_for``), so a listing that holds other jobs (scontrol's fallback
        while slurmdbd is down) is "not found" (``None``), never another job."""
        result = await self.query(slurm_argv.scontrol_show_job_argv(job_id))
        if result.exit_code != 0:
            # an unknown id is "Invalid job id" on stderr; a task of a known array "Job 123_4 not found" on stdout
            if "invalid job id" in result.stderr.lower() or result.stdout.strip() == f"Job {job_id} not found":
                finished = answers.record_for(job_id, await self._finished_jobs([job_id]))
                return finished if finished is not None else await self._never_started(job_id)
            raise TransportError("scontrol failed", argv=result.argv, exit_code=result.exit_code, stderr=result.stderr)
        return await self._with_accounted_times(answers.record_for(job_id, parse.parse_scontrol_jobs(result.stdout)))

    async def _with_accounted_times(self, job: JobStatus | None) -> JobStatus | None:
        """A job scontrol described, with the Start and End accounting recorded: scontrol prints its times in the
        cluster's zone without naming it, sacct as Unix seconds. A pending job has neither; without accounting the
        job keeps none (unknown, never guessed)."""
        if job is None or job.state is JobState.PENDING or job.started_at is not None:
            return job
        result = await self.query(slurm_argv.sacct_argv([job.job_id]))
        accounted = answers.record_for(job.job_id, parse.parse_sacct(result.stdout)) if result.exit_code == 0 else None
        if accounted is None:
            return job
        return job.model_copy(update={"started_at": accounted.started_at, "ended_at": accounted.ended_at})

    async def cancel(self, job_ids: Sequence[str]) -> None:
        if job_ids:
            await self.check(slurm_argv.scancel_argv(list(job_ids)))

    async def hold(self, job_ids: Sequence[str], *, release: bool = False) -> None:
        # scontrol goes through every id, so one that just ended (exit 1) leaves the others held: only a line that
        # is neither "No error" nor "already finished" is a failure (hold_answers)
        if not job_ids:
            return
        result = await self.run(slurm_argv.scontrol_hold_argv(list(job_ids), release=release), idempotent=False)
        failures = hold_failures(result.stderr)
        if result.exit_code != 0 and (failures or not result.stderr.strip()):
            verb = "release" if release else "uhold"
            raise TransportError(
                f"scontrol {verb} failed on transport {self.name!r}: {'; '.join(failures) or 'no reason given'}",
                argv=result.argv,
                exit_code=result.exit_code,
                stderr=result.stderr,
            )

    async def read_log(self, path: str, *, offset: int = 0, limit: int = LOG_CHUNK_LIMIT) -> LogChunk:
        limit = max(1, min(limit, LOG_CHUNK_LIMIT))
        offset = max(0, offset)
        got = await self.read_bytes(path, offset, limit)
        if got is None:
            return LogChunk(path=path, content="", offset=offset, next_offset=offset, size=None)
        data, size = got
        if offset > 0:  # an offset chosen from the end (a tail) may fall inside a character: start after it
            skip = next((i for i, byte in enumerate(data[:4]) if byte & 0b1100_0000 != 0b1000_0000), len(data[:4]))
            data, offset = data[skip:], offset + skip
        # ``size`` is taken before the read: a file that grew in between can fill the whole chunk past it, and a
        # character cut at the chunk's end then still has its next bytes to come.
        text, used = decode_complete(data, at_eof=len(data) < limit and offset + len(data) >= size)
        return LogChunk(path=path, content=text, offset=offset, next_offset=offset + used, size=size)

    async def nodes(self, partition: str | None = None) -> list[NodeInfo]:
        """Every node of every partition (or of one), one entry per node and partition: one sinfo."""
        return parse.parse_sinfo(await self.check(slurm_argv.sinfo_argv(partition)))

    async def resources(self, partition: str | None = None) -> list[ResourceSnapshot]:
        # every partition's nodes, even for one: which other partitions share its nodes is part of the answer
        nodes, running = await self._nodes_and_running()
        return summarize(nodes, running, now=datetime.now(UTC), partition=partition)

    async def resources_total(self) -> ResourceSnapshot:
        nodes, running = await self._nodes_and_running()
        return summarize_cluster(nodes, running, now=datetime.now(UTC))

    async def _nodes_and_running(self) -> tuple[list[NodeInfo], list[JobStatus]]:
        """sinfo and squeue at the same time (two channels on one SSH connection, two local processes)."""
        nodes, queue = await asyncio.gather(self.nodes(), self.queue())
        return nodes, [job for job in queue if job.state is JobState.RUNNING]


_SUBMITTING: contextvars.ContextVar[tags.SubmissionTag | None] = contextvars.ContextVar("svc_submitting", default=None)
"""The tag of the submission ``SlurmTransport.submit`` is running in this task, for ``_keeping_the_tag``."""


def _keeping_the_tag(run: Callable[..., Awaitable[CommandResult]]) -> Callable[..., Awaitable[CommandResult]]:
    """A subclass's ``run``, refusing an ``sbatch`` of svc's submission whose ``--comment`` is not svc's tag.

    svc tells whether a submission whose answer was lost reached the scheduler by its tag, and sends it again
    when it did not: a wrapping transport that replaced or dropped the tag (its own ``--comment`` after svc's
    wins in sbatch) would have every such submission sent twice. Every ``run`` of every ``SlurmTransport``
    subclass is wrapped, so the check sees the argv that reaches the innermost transport, and refuses before
    anything runs."""

    @functools.wraps(run)
    async def checked(self: SlurmTransport, argv: Sequence[str], *args: Any, **kwargs: Any) -> CommandResult:
        tag = _SUBMITTING.get()
        if tag is not None and tag.value is not None and slurm_argv.program(argv) == "sbatch":
            effective = _argv_comment(argv)
            if effective != tag.value and (tag.on_command_line or effective is not None):
                raise TransportError(
                    f"transport {self.name!r} changed the --comment of svc's sbatch to {effective!r}: svc finds a "
                    f"submission whose answer was lost by its tag --comment={tag.value}, and without it would "
                    "submit the job twice; keep svc's --comment (nothing was submitted)",
                    argv=argv,
                )
        return await run(self, argv, *args, **kwargs)

    return checked


def _argv_comment(argv: Sequence[str]) -> str | None:
    """The ``--comment`` sbatch would use from ``argv`` (the last one given), or None when it gives none."""
    found: str | None = None
    for index, word in enumerate(argv):
        if word.startswith("--comment="):
            found = word.partition("=")[2]
        elif word == "--comment":
            found = argv[index + 1] if index + 1 < len(argv) else ""
    return found


def decode_complete(data: bytes, *, at_eof: bool) -> tuple[str, int]:
    """Decode UTF-8 without splitting a character at the end of a chunk; returns text and bytes used.

    An incomplete trailing sequence is left for the next read unless the file ends there.
    """
    if not at_eof:
        for back in range(1, min(4, len(data)) + 1):
            byte = data[-back]
            if byte & 0b1100_0000 != 0b1000_0000:  # first byte of the last character
                needed = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
                if needed > back:
                    data = data[:-back]
                break
    return data.decode("utf-8", errors="replace"), len(data)
