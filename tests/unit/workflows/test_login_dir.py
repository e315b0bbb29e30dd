"""Over SSH, a workflow job with no ``work_dir`` and no mount runs in the cluster's login directory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from svc_host import hookimpl
from svc_host.domain.profiles import HostConfig, Mount, SSHProfile
from svc_host.errors import TransportError, WorkflowError
from svc_host.host import Host
from svc_host.plugin_core.records import TransportSpec
from svc_host.testing.fake import FakeTransport
from svc_host.transports.base import CommandResult, SlurmTransport
from svc_host.workflows.prepare import RunRequest

HOME = "/home/ada"


class Scripted(SlurmTransport):
    """A cluster that answers each command from ``answers`` (``argv[0] -> (exit code, stdout, stderr)``)."""

    name = "hpc"

    def __init__(self, answers: dict[str, tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    async def run(self, argv: Sequence[str], **_: Any) -> CommandResult:
        self.calls.append(list(argv))
        code, out, err = self.answers[argv[0]]
        return CommandResult(list(argv), code, out, err)

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


FLOW = """\
name: flow
jobs:
  - {name: a, command: 'true'}
  - {name: b, command: 'true', work_dir: runs/b, log_dir: out}
"""


@pytest.fixture
def login(svc_register_plugin: Any, svc_test_host: Host, tmp_path: Path) -> Scripted:
    """A profile ``hpc`` (with the mount ``code``) whose cluster answers ``pwd`` with the login directory."""
    cluster = Scripted({"pwd": (0, f"{HOME}\n", "")})

    @hookimpl
    def svc_transports(config: HostConfig) -> list[TransportSpec]:
        return [
            TransportSpec(name="hpc", factory=lambda: cluster, remote=True, mounts=True),
            TransportSpec(name="plain", factory=FakeTransport, remote=True),
        ]

    svc_register_plugin(SimpleNamespace(svc_transports=svc_transports), "scripted")
    local = tmp_path / "code"
    local.mkdir()
    profile = SSHProfile(hostname="login.example.org", mounts=[Mount(name="code", local=str(local), remote="p/code")])
    svc_test_host.profiles.create("hpc", profile)
    return cluster


def flow(tmp_path: Path) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW)
    return path


async def prepared_dirs(host: Host, tmp_path: Path, **request: Any) -> dict[str, tuple[str | None, str]]:
    engine = await host.workflow_engine()
    try:
        run = await engine.prepare(RunRequest(yaml_path=flow(tmp_path), **request))
    finally:
        await host.close_services()
    return {job.name: (job.definition.work_dir, job.definition.log_dir) for job in run.new_run.jobs}


async def test_jobs_without_work_dir_run_in_the_login_directory(
    svc_test_host: Host, login: Scripted, tmp_path: Path
) -> None:
    placed = await prepared_dirs(svc_test_host, tmp_path, transport="hpc")
    assert placed == {"a": (HOME, "logs"), "b": ("runs/b", "out")}
    await prepared_dirs(svc_test_host, tmp_path, transport="hpc")
    assert login.calls == [["pwd"], ["pwd"]]  # a connectionless transport asks each time; SSH keeps it


async def test_a_mount_keeps_its_translation_and_the_cluster_is_not_asked(
    svc_test_host: Host, login: Scripted, tmp_path: Path
) -> None:
    placed = await prepared_dirs(svc_test_host, tmp_path, transport="hpc", mount="code")
    assert placed == {"a": ("p/code", "logs"), "b": ("p/code/runs/b", "../../out")}  # log_dir from the mount root
    assert login.calls == []


async def test_a_transport_that_cannot_say_still_needs_work_dir(
    svc_test_host: Host, login: Scripted, tmp_path: Path
) -> None:
    with pytest.raises(WorkflowError, match="work_dir is required with transport='plain'"):
        await prepared_dirs(svc_test_host, tmp_path, transport="plain")


async def test_a_cluster_answer_that_is_no_absolute_path_is_an_error(
    svc_test_host: Host, login: Scripted, tmp_path: Path
) -> None:
    login.answers["pwd"] = (0, "pwd: not found?\n", "")
    with pytest.raises(TransportError, match="did not print an absolute path"):
        await prepared_dirs(svc_test_host, tmp_path, transport="hpc")
