"""Which cluster a transport reaches, parsed from ``scontrol show config`` as recorded on both dev clusters."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.errors import SlurmParseError
from svc_host.slurm.identity import ClusterIdentity, parse_identity

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize(
    ("recorded", "name", "port"),
    [("slurm/scontrol_show_config.txt", "svcdev", "6817"), ("slurm-24.11/scontrol_show_config.txt", "lab24", "7817")],
)
def test_the_recorded_clusters_are_named_with_their_controller(recorded: str, name: str, port: str) -> None:
    identity = parse_identity((FIXTURES / recorded).read_text())
    assert identity == ClusterIdentity(name=name, controllers=("vm(127.0.0.1)",), port=port)
    assert identity.key == f"{name}@vm(127.0.0.1):{port}"


def test_two_clusters_of_one_name_on_different_controllers_are_two() -> None:
    # many sites keep Slurm's default name: the controllers tell them apart
    a = parse_identity("ClusterName = cluster\nSlurmctldHost[0] = ctl-a\nSlurmctldPort = 6817\n")
    b = parse_identity("ClusterName = cluster\nSlurmctldHost[0] = ctl-b\nSlurmctldPort = 6817\n")
    assert a.key != b.key


def test_backup_controllers_keep_their_order_and_old_slurm_names_its_control_machine() -> None:
    ha = "SlurmctldHost[1] = ctl2\nClusterName = hpc\nSlurmctldHost[0] = ctl1(10.0.0.1)\nSlurmctldPort = 6817\n"
    assert parse_identity(ha).controllers == ("ctl1(10.0.0.1)", "ctl2")
    old = "ClusterName = hpc\nControlMachine = ctl1\nBackupController = (null)\nSlurmctldPort = 6817\n"
    assert parse_identity(old).controllers == ("ctl1",)


def test_an_answer_without_a_cluster_name_is_an_error_naming_the_command() -> None:
    with pytest.raises(SlurmParseError, match="scontrol show config"):
        parse_identity("SlurmctldHost[0] = ctl1\n")
