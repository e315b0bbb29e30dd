"""Sweeps and their cells in the shapes the specs give them (REST, MCP and the CLI's ``--json`` share these)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from svc_host.domain.times import iso_utc
from svc_host.store.tables import SweepRunRecord, WorkflowRunRecord


def sweep_view(
    sweep: SweepRunRecord, queued: str | None = None, *, in_queue: int = 0, queue_reason: str | None = None
) -> dict[str, Any]:
    """The REST "Sweep run"; ``queued`` says why cells wait to be submitted (``svc_host.runtime.throttle``),
    ``in_queue`` how many of the ``cells_running`` wait in Slurm's queue and ``queue_reason`` why
    (``svc_host.sweeps.queued``)."""
    return {
        "id": sweep.id,
        "name": sweep.name,
        "workflow_yaml_path": sweep.workflow_yaml_path,
        "status": sweep.status,
        "matrix": json.loads(sweep.matrix),
        "args": json.loads(sweep.args),
        "fail_fast": sweep.fail_fast,
        "max_parallel": sweep.max_parallel,
        "max_failures": sweep.max_failures,
        "cell_count": sweep.cell_count,
        "cells_pending": sweep.cells_pending,
        "cells_running": sweep.cells_running,
        "cells_completed": sweep.cells_completed,
        "cells_failed": sweep.cells_failed,
        "cells_cancelled": sweep.cells_cancelled,
        "cells_held": sweep.cells_held,
        "cells_in_queue": in_queue,
        "queue_reason": queue_reason,
        "paused_at": iso_utc(sweep.paused_at),
        "submission_source": sweep.submission_source,
        "transport": sweep.transport,
        "started_at": iso_utc(sweep.started_at),
        "completed_at": iso_utc(sweep.completed_at),
        "cancel_requested_at": iso_utc(sweep.cancel_requested_at),
        "error": sweep.error,
        "array_job_id": sweep.array_job_id,
        "queued": queued,
    }


def cell_view(run: WorkflowRunRecord, job_ids: Mapping[str, str], queued: str | None = None) -> dict[str, Any]:
    """The REST "Sweep cell": a workflow run of the sweep with its resolved args, ``job_ids`` (job name -> the
    scheduler id of its current attempt, as a run's) and ``queued`` (as a run's)."""
    return {
        "id": run.id,
        "workflow_name": run.workflow_name,
        "status": run.status,
        "started_at": iso_utc(run.started_at),
        "completed_at": iso_utc(run.completed_at),
        "args": json.loads(run.args),
        "error": run.error,
        "triggered_by": run.triggered_by,
        "job_ids": dict(job_ids),
        "queued": queued,
    }


def mcp_result(sweep: SweepRunRecord) -> dict[str, Any]:
    """``run_workflow``'s sweep shape (without ``success``), with the pause (``paused``, ``cells_held``) and the
    failure budget (``max_failures``, ``error``)."""
    return {
        "sweep_run_id": sweep.id,
        "status": sweep.status,
        "cell_count": sweep.cell_count,
        "cells_completed": sweep.cells_completed,
        "cells_failed": sweep.cells_failed,
        "cells_cancelled": sweep.cells_cancelled,
        "paused": sweep.paused_at is not None,
        "cells_held": sweep.cells_held,
        "max_failures": sweep.max_failures,
        "error": sweep.error,
    }
