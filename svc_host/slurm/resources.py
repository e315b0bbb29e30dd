"""Per-partition GPU and node availability from parsed sinfo (or scontrol) nodes and squeue jobs."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from svc_host.domain.jobs import JobState
from svc_host.domain.resources import GpuTypeAvailability, ResourceSnapshot

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from svc_host.domain.jobs import JobStatus
    from svc_host.domain.resources import NodeInfo


def summarize(
    nodes: Sequence[NodeInfo],
    running: Sequence[JobStatus],
    *,
    now: datetime,
    partition: str | None = None,
) -> list[ResourceSnapshot]:
    """One snapshot per partition, sorted by name (only ``partition`` when given; unknown: none).

    GPUs of down or drained nodes are not offered, so they count in neither ``total_gpus`` nor
    ``gpus_in_use``. GPUs in use are the nodes' GRES in use, so a job on two nodes with two GPUs each counts
    four. ``jobs_running`` counts the jobs in ``running`` whose state is RUNNING. A node in two partitions
    counts in both: each names the other in ``shares_nodes_with``.
    """
    by_partition: dict[str, list[NodeInfo]] = defaultdict(list)
    for node in nodes:
        by_partition[node.partition].append(node)
    names = sorted(by_partition) if partition is None else [partition] if partition in by_partition else []
    holders: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        holders[node.name].add(node.partition)
    return [
        _snapshot(name, by_partition[name], running, now).model_copy(
            update={
                "shares_nodes_with": sorted({p for node in by_partition[name] for p in holders[node.name]} - {name})
            }
        )
        for name in names
    ]


def _snapshot(name: str, nodes: list[NodeInfo], jobs: Sequence[JobStatus], now: datetime) -> ResourceSnapshot:
    up = [node for node in nodes if not node.is_down]
    total = sum(node.gpus_total for node in up)
    in_use = min(sum(node.gpus_used for node in up), total)
    return ResourceSnapshot(
        gpu_types=_by_type(up),
        timestamp=now,
        partition=name,
        total_gpus=total,
        gpus_in_use=in_use,
        gpus_available=total - in_use,
        jobs_running=sum(1 for job in jobs if job.partition == name and job.state is JobState.RUNNING),
        nodes_total=len(nodes),
        nodes_idle=sum(1 for node in nodes if node.is_idle),
        nodes_down=len(nodes) - len(up),
        gpu_utilization=round(in_use / total, 4) if total else 0.0,
        has_available_gpus=total > in_use,
    )


def _by_type(nodes: list[NodeInfo]) -> list[GpuTypeAvailability]:
    total: dict[str, int] = defaultdict(int)
    used: dict[str, int] = defaultdict(int)
    for node in nodes:
        for kind, count in node.gpu_types.items():
            total[kind] += count
        for kind, count in node.gpu_types_used.items():
            used[kind] += count
    kinds = sorted(total, key=lambda kind: (kind == "", kind))
    return [
        GpuTypeAvailability(
            type=kind or None,
            total=total[kind],
            in_use=min(used[kind], total[kind]),
            available=total[kind] - min(used[kind], total[kind]),
        )
        for kind in kinds
    ]


CLUSTER = "all"
"""The ``partition`` label of a whole-cluster snapshot."""


def summarize_cluster(nodes: Sequence[NodeInfo], running: Sequence[JobStatus], *, now: datetime) -> ResourceSnapshot:
    """One snapshot of the whole cluster: each node counted once, whatever partitions hold it."""
    unique: dict[str, NodeInfo] = {}
    for node in nodes:
        unique.setdefault(node.name, node)
    everywhere = [job.model_copy(update={"partition": CLUSTER}) for job in running]
    return _snapshot(CLUSTER, list(unique.values()), everywhere, now)
