"""Which Slurm cluster a transport reaches, from ``scontrol show config``: its ``ClusterName``, its controllers
(``SlurmctldHost[0]``, ``[1]``... ; ``ControlMachine`` before Slurm 18.08) and their port.

Two profiles can reach one cluster (two login nodes, a bastion and a direct route, ``local`` on a login node):
the same identity says so, and views that add clusters up count it once. The name alone is not enough (many
sites keep Slurm's default ``cluster``); the name with its controllers is what slurmctld itself answers to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from svc_host.errors import SlurmParseError
from svc_host.slurm.limits import parse_config

_CONTROLLER = re.compile(r"^SlurmctldHost\[(\d+)\]$")


@dataclass(frozen=True)
class ClusterIdentity:
    """A Slurm cluster as ``scontrol show config`` names it."""

    name: str
    controllers: tuple[str, ...]
    port: str

    @property
    def key(self) -> str:
        """One string for comparing identities: ``svcdev@vm(127.0.0.1):6817``."""
        return f"{self.name}@{','.join(self.controllers)}:{self.port}"


def parse_identity(stdout: str) -> ClusterIdentity:
    """The identity in ``scontrol show config``'s output.

    Raises:
        SlurmParseError: the output names no cluster or no controller.
    """
    config = parse_config(stdout)
    numbered = sorted((int(found[1]), value) for key, value in config.items() if (found := _CONTROLLER.match(key)))
    controllers = tuple(value for _, value in numbered) or tuple(
        host for host in (config.get("ControlMachine"), config.get("BackupController")) if host and host != "(null)"
    )
    name = config.get("ClusterName", "")
    if not name or not controllers:
        msg = f"unexpected scontrol show config output: no ClusterName or controller in {len(config)} settings"
        raise SlurmParseError(msg)
    return ClusterIdentity(name=name, controllers=controllers, port=config.get("SlurmctldPort", ""))
