"""Why jobs are pending and when they start; would a job not yet submitted fit, and where. For every interface.

:func:`explain` reads each job with one ``scontrol show job`` (all jobs in one call when asked about several),
then, at the same time and only what the reasons need: the jobs' QOS and association limits (``sacctmgr``), the
partitions (``scontrol show partition``), their nodes (``sinfo``), the live jobs the limits count (``squeue``) and
the start estimates of all the pending ones (one ``squeue``). :func:`fit_answer` renders a job exactly as
:func:`svc_host.services.jobs.submit` would and hands the script to ``sbatch --test-only``.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from svc_host.errors import InvalidRequestError, TransportError
from svc_host.plugin_core.settings import render_job
from svc_host.services import jobs
from svc_host.slurm import argv as slurm_argv
from svc_host.slurm import pending_inputs as inputs
from svc_host.slurm.arrays import task_ids
from svc_host.slurm.pending import check_time_limit
from svc_host.slurm.pending import explain as explain_one
from svc_host.slurm.pending_job import Context, Explanation, PendingJob
from svc_host.slurm.scontrol import split_oneliner
from svc_host.transports.base import CommandResult, SlurmTransport

if TYPE_CHECKING:
    from collections.abc import Callable

    from svc_host.domain.resources import NodeInfo
    from svc_host.domain.submission import JobDefinition
    from svc_host.runtime.ports import Ports
    from svc_host.settings.config import SvcConfig

_TIME_DIRECTIVE = re.compile(r"^#SBATCH\s+(?:--time[= ]\s*|-t\s*)(\S+)", re.MULTILINE)
_NOW_SLACK = timedelta(minutes=1)


def _slurm(host: Ports, transport: str) -> SlurmTransport:
    target = host.transport(transport)
    if not isinstance(target, SlurmTransport):
        raise InvalidRequestError(
            f"transport {transport!r} does not run Slurm's commands: svc cannot ask it why a job waits"
        )
    return target


async def explain(host: Ports, transport: str, job_ids: list[str]) -> list[dict[str, Any]]:
    """One answer per job id, in order: the sentence and the binding limit for a pending job, its start estimate,
    and for a job that is not pending a plain "not pending". An id Slurm and svc's store both do not know is a
    ``NotFoundError``."""
    target = _slurm(host, transport)
    shown = await target.query(slurm_argv.scontrol_show_job_argv(job_ids[0] if len(job_ids) == 1 else None))
    if shown.exit_code != 0 and "invalid job id" not in shown.stderr.lower():
        raise TransportError("scontrol failed", argv=shown.argv, exit_code=shown.exit_code, stderr=shown.stderr)
    records = _records(shown)
    pending = [records[job_id] for job_id in job_ids if job_id in records and records[job_id].state == "PENDING"]
    context, estimates = await _context(target, pending)
    answers = []
    for job_id in job_ids:
        job = records.get(job_id)
        if job is None or job.state != "PENDING":
            if job is not None:
                state = job.state
            else:  # gone from slurmctld's memory: accounting or svc's store; NotFoundError if nobody knows it
                view = await jobs.status(host, transport, job_id)
                state = view.status.raw_state or view.status.state.value
            sentence = f"Job {job_id} is {state}, not pending."
            if state == "PENDING":  # svc's store still says so, scontrol no longer shows it: it is just changing
                sentence = f"Job {job_id} is PENDING in svc's records but the scheduler no longer lists it: ask again."
            answers.append(_answer(job_id, state, None, None, sentence))
            continue
        explained = explain_one(job, context(job))
        answers.append(_answer(job_id, "PENDING", explained, estimates.get(job_id), explained.sentence))
    return answers


def _records(shown: CommandResult) -> dict[str, PendingJob]:
    """Jobs by id; the pending tasks of an array, one record ``ArrayTaskId=0-9%2``, under each task's id too."""
    found = {}
    for line in shown.stdout.splitlines() if shown.exit_code == 0 else []:
        if line.startswith("JobId="):
            fields = split_oneliner(line)
            job = PendingJob.from_fields(fields)
            found[job.job_id] = job
            tasks = fields.get("ArrayTaskId", "")
            if tasks and not tasks.isdigit():
                for task in task_ids(f"{fields.get('ArrayJobId', job.job_id)}_[{tasks}]"):
                    found[task] = replace(job, job_id=task)
    return found


async def _context(
    target: SlurmTransport, pending: list[PendingJob]
) -> tuple[Callable[[PendingJob], Context], dict[str, inputs.StartEstimate]]:
    """What the reasons of ``pending`` need, read at the same time; returns a job -> Context function and the
    start estimates by id."""
    reasons = {job.reason.split(" ")[0].split(",")[0] for job in pending}
    qos_names = sorted({job.qos for job in pending if job.reason.startswith("QOS")})
    accounts = sorted({job.account for job in pending if job.reason.startswith("Assoc")})
    needs_live = any(word.startswith(("QOS", "Assoc", "Priority")) for word in reasons)
    node_partitions = sorted(
        {job.partition for job in pending if job.reason.startswith(("Resources", "ReqNodeNotAvail", "Nodes required"))}
    )
    now = datetime.now(UTC)

    async def nothing() -> str:
        return ""

    texts = asyncio.gather(
        target.check(inputs.qos_argv(qos_names)) if qos_names else nothing(),
        target.check(inputs.assoc_argv(accounts)) if accounts else nothing(),
        target.check(inputs.partitions_argv()) if "PartitionTimeLimit" in reasons else nothing(),
        target.check(inputs.live_jobs_argv()) if needs_live else nothing(),
        _start(target, [job.job_id for job in pending]),
    )
    node_lists: list[list[NodeInfo]]
    (qos_out, assoc_out, parts_out, live_out, start_out), node_lists = await asyncio.gather(
        texts, asyncio.gather(*(target.nodes(partition) for partition in node_partitions))
    )
    qos, assoc = inputs.parse_qos(qos_out), inputs.parse_assoc(assoc_out)
    partitions, live = inputs.parse_partitions(parts_out), tuple(inputs.parse_live_jobs(live_out))
    nodes: tuple[NodeInfo, ...] = tuple(node for found in node_lists for node in found)

    def context(job: PendingJob) -> Context:
        return Context(
            qos=qos.get(job.qos),
            associations=assoc,
            partition=partitions.get(job.partition),
            nodes=nodes,
            live=live,
        )

    return context, inputs.parse_start(start_out, now=now) if start_out else {}


async def _start(target: SlurmTransport, job_ids: list[str]) -> str:
    if not job_ids:
        return ""
    result = await target.query(inputs.start_argv(job_ids))
    if result.exit_code != 0:  # the jobs started or ended since scontrol saw them: no estimate, no error
        return ""
    return result.stdout


def _answer(
    job_id: str, state: str, explained: Explanation | None, estimate: inputs.StartEstimate | None, sentence: str
) -> dict[str, Any]:
    return {
        "job_id": job_id,
        "pending": explained is not None,
        "status": state,
        "reason": explained.reason if explained else None,
        "explanation": sentence,
        "needs_action": explained.needs_action if explained else False,
        "limit": asdict(explained.binding) if explained and explained.binding else None,
        "start_estimate": _estimate(estimate),
    }


def _estimate(estimate: inputs.StartEstimate | None) -> dict[str, Any] | None:
    if estimate is None or (estimate.at is None and estimate.nodes is None):
        return None
    return {
        "at": estimate.at.isoformat() if estimate.at else None,
        "nodes": estimate.nodes,
        "partition": estimate.partition,
        "processors": estimate.processors,
    }


async def fit_answer(
    host: Ports, definition: JobDefinition, *, transport: str, config: SvcConfig | None = None
) -> dict[str, Any]:
    """Would this job fit now, and where: the script :func:`svc_host.services.jobs.submit` would send (with ``config``'s
    defaults, else the host's), given to ``sbatch --test-only`` (nothing is submitted). A refusal is an answer
    (``fits: false``), not an error."""
    target = _slurm(host, transport)
    config = config or host.config()
    rendered = render_job(host.plugins, definition, config)
    result = await target.run(inputs.test_only_argv(), stdin=rendered.text)
    now = datetime.now(UTC)
    answer = inputs.parse_test_only(result.exit_code, result.stderr, now=now)
    body: dict[str, Any] = {"fits": False, "start_estimate": _estimate(answer.estimate), "refusal": answer.refusal}
    if answer.estimate is None:
        body["explanation"] = f"Slurm would not accept this job: {answer.refusal}."
        return body
    estimate = answer.estimate
    plural = "s" * (estimate.processors != 1)
    where = f"on {estimate.nodes} in partition '{estimate.partition}' ({estimate.processors} processor{plural})"
    asked = _TIME_DIRECTIVE.findall(rendered.text)
    if asked and estimate.partition:
        partitions = inputs.parse_partitions(await target.check(inputs.partitions_argv()))
        never = check_time_limit(asked[-1], partitions.get(estimate.partition, {}))
        if never is not None:
            body["explanation"] = f"It would not start {where}: {never}."
            return body
    body["fits"] = True
    if estimate.at is None:
        body["explanation"] = f"Slurm would place it {where}, but gives no start time for it."
    elif estimate.at <= now + _NOW_SLACK:
        body["explanation"] = f"It fits now: Slurm would start it at once {where}."
    else:
        body["explanation"] = f"It fits, not at once: Slurm expects to start it at {estimate.at.isoformat()} {where}."
    return body
