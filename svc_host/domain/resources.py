"""Cluster capacity: nodes as the scheduler reports them and the per-partition snapshot users see."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class NodeInfo(BaseModel):
    """One node in one partition (a node in two partitions yields two records)."""

    model_config = ConfigDict(frozen=True)

    name: str
    partition: str
    raw_state: str
    cpus: int = 0
    gpus_total: int = 0
    gpus_used: int = 0
    gpu_types: dict[str, int] = Field(default_factory=dict)
    """GPUs per type (``a100``, ``a100_3g.20gb``; ``""`` for untyped ones), as configured."""
    gpu_types_used: dict[str, int] = Field(default_factory=dict)
    """GPUs per type in use."""

    @property
    def is_down(self) -> bool:
        """Down, drained, draining, failed or not responding: its GPUs are not offered."""
        state = self.raw_state.lower().rstrip("*~#!%$@^-+")
        return any(word in state for word in ("down", "drain", "fail", "maint", "reboot", "inval", "unk"))

    @property
    def is_idle(self) -> bool:
        return not self.is_down and self.raw_state.lower().rstrip("*~#!%$@^-+") == "idle"


class GpuTypeAvailability(BaseModel):
    """One GPU type of a partition (or of the cluster): which of its GPUs are free."""

    type: str | None
    """``a100``, ``v100``, a MIG slice such as ``a100_3g.20gb``; ``None`` for GPUs configured without a type."""
    total: int
    in_use: int
    available: int


class ResourceSnapshot(BaseModel):
    """GPU and node availability of one partition at one moment (the REST "Resource snapshot")."""

    timestamp: datetime
    partition: str
    total_gpus: int
    gpus_in_use: int
    gpus_available: int
    jobs_running: int
    nodes_total: int
    nodes_idle: int
    nodes_down: int
    gpu_utilization: float
    has_available_gpus: bool
    gpu_types: list[GpuTypeAvailability] = Field(default_factory=list)
    """The GPUs of up nodes per type, by type name (untyped last); their totals add up to the fields above."""
    shares_nodes_with: list[str] = Field(default_factory=list)
    """The other partitions that hold any of this partition's nodes, by name: their GPUs and their use are the
    same GPUs as these (a node's use shows in each of its partitions), so partitions' figures do not add up."""
