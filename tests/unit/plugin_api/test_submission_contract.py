"""The submission contract a transport plugin relies on: the argv ``run`` receives, the ``--comment`` tag a wrapper
may not replace, ``SlurmTransport``'s own state out of a subclass's way, and profile names plugins hold."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from svc_host import hookimpl
from svc_host.domain.submission import RenderedScript
from svc_host.errors import OutcomeUnknownError, TransportError
from svc_host.host import Host
from svc_host.transports.base import CommandResult, SlurmTransport

SCRIPT = RenderedScript(text="#!/bin/bash\necho hi\n", log_dir="logs", stdout_path="logs/o", stderr_path="logs/e")


class Scripted(SlurmTransport):
    """A cluster that answers sbatch with job 42 and ``id -un`` with ``alice``, and keeps every argv it ran."""

    name = "scripted"

    def __init__(self) -> None:
        self.ran: list[tuple[list[str], str | None]] = []

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        self.ran.append((list(argv), stdin))
        answer = {"sbatch": "42\n", "id": "alice\n"}.get(argv[0], "")
        return CommandResult(argv=list(argv), exit_code=0, stdout=answer, stderr="")

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return None


class Wrapper(SlurmTransport):
    """A site transport composed over another (as a factory does with ``host.transport(name)``), adding to argv."""

    name = "wrapper"

    def __init__(self, inner: SlurmTransport, extra: Sequence[str]) -> None:
        self.inner, self.extra = inner, list(extra)

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        if argv[:1] == ["sbatch"]:
            argv = [*argv, *self.extra]
        return await self.inner.run(argv, stdin=stdin, timeout=timeout, idempotent=idempotent)

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        return await self.inner.read_bytes(path, offset, limit)


async def test_sbatch_is_parsable_tagged_and_reads_the_script_on_stdin() -> None:
    cluster = Scripted()
    assert await cluster.submit(SCRIPT) == "42"
    (argv, stdin) = cluster.ran[-1]
    assert argv[:2] == ["sbatch", "--parsable"]
    assert len(argv) == 3
    assert argv[2].startswith("--comment=svc:")
    assert stdin == SCRIPT.text


@pytest.mark.parametrize(
    "extra", [["--comment=site:billing"], ["--comment", "site:billing"]], ids=["equals", "separate word"]
)
async def test_a_wrapper_replacing_the_tag_is_refused_before_anything_is_submitted(extra: list[str]) -> None:
    inner = Scripted()
    with pytest.raises(TransportError, match=r"transport 'scripted' changed the --comment of svc's sbatch to "):
        await Wrapper(inner, extra).submit(SCRIPT)
    assert [argv[0] for argv, _ in inner.ran] == ["mkdir"]  # no sbatch ran


async def test_a_wrapper_that_keeps_the_tag_submits() -> None:
    inner = Scripted()
    assert await Wrapper(inner, ["--account=site"]).submit(SCRIPT) == "42"
    assert inner.ran[-1][0][:2] == ["sbatch", "--parsable"]
    assert inner.ran[-1][0][-1] == "--account=site"


async def test_a_wrapper_adding_a_comment_over_a_workflow_marker_is_refused() -> None:
    marked = SCRIPT.model_copy(update={"text": "#!/bin/bash\n#SBATCH --comment=svc-wf:run1:train:1\necho hi\n"})
    with pytest.raises(TransportError, match="changed the --comment"):
        await Wrapper(Scripted(), ["--comment=site:billing"]).submit(marked)
    assert await Wrapper(Scripted(), ["--account=site"]).submit(marked) == "42"


async def test_the_tag_check_applies_only_to_svcs_own_submission() -> None:
    """A plugin's own sbatch (not through ``submit``) keeps the comment it chose."""
    inner = Scripted()
    result = await Wrapper(inner, ["--comment=site:billing"]).run(["sbatch", "--test-only"], stdin=SCRIPT.text)
    assert result.exit_code == 0
    assert inner.ran[-1][0] == ["sbatch", "--test-only", "--comment=site:billing"]


async def test_a_subclass_login_attribute_does_not_change_user() -> None:
    class Subclass(Scripted):
        def __init__(self) -> None:
            super().__init__()
            self._login = "ssh-login-of-the-subclass"  # a name a transport holding a connection naturally uses
            self._queries = "the subclass's own"
            self._queue_reader = None

    cluster = Subclass()
    assert await cluster.user() == "alice"
    assert await cluster.queue() == []
    await cluster.close()


async def test_a_lost_answer_is_still_looked_up_by_the_tag_through_a_wrapper() -> None:
    """The composition keeps "never submitted twice": the tag the inner transport saw is the one looked up."""

    class LosesTheFirstAnswer(Scripted):
        async def run(
            self,
            argv: Sequence[str],
            *,
            stdin: str | None = None,
            timeout: float | None = None,
            idempotent: bool = True,
        ) -> CommandResult:
            if argv[0] == "sbatch" and not any(a[0] == "sbatch" for a, _ in self.ran):
                self.ran.append((list(argv), stdin))
                self.tag = next(word.partition("=")[2] for word in argv if word.startswith("--comment="))
                raise OutcomeUnknownError("connection lost after sbatch started")
            if argv[0] == "squeue":
                return CommandResult(argv=list(argv), exit_code=0, stdout=f"42|{self.tag}\n", stderr="")
            return await super().run(argv, stdin=stdin, timeout=timeout, idempotent=idempotent)

    inner = LosesTheFirstAnswer()
    wrapper = Wrapper(inner, ["--account=site"])
    wrapper.reconcile_delays = (0.0,)
    assert await wrapper.submit(SCRIPT) == "42"
    assert [argv[0] for argv, _ in inner.ran].count("sbatch") == 1


def test_svc_profile_add_refuses_a_name_a_plugin_transport_holds() -> None:
    def svc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "svc_host", *args], capture_output=True, text=True, timeout=60, check=False
        )

    refused = svc("profile", "add", "site", "--hostname", "h.example")
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        "error: profile name 'site' is taken by the transport 'site' of plugin site (svc-plugin-example-site "
        f"{_site_version()}), and a profile is a transport of the same name; choose another name"
    ]
    assert svc("profile", "add", "gpu", "--hostname", "h.example").returncode == 0
    listed = json.loads(svc("profile", "list", "--json").stdout)
    assert [entry["name"] for entry in listed] == ["gpu"]


async def test_the_rest_api_answers_409_for_a_profile_name_a_plugin_transport_holds() -> None:
    from svc_host.api.app import create_app
    from svc_host.host import Host
    from svc_host.testing.http import asgi_client, security_for_tests

    host = Host.create("web")
    try:
        async with asgi_client(create_app(host, security=security_for_tests())) as http:
            answer = await http.post("/api/config/ssh/profiles", json={"name": "local2", "hostname": "h"})
            assert answer.status_code == 200, answer.text
            answer = await http.post("/api/config/ssh/profiles", json={"name": "site", "hostname": "h"})
    finally:
        await host.close()
    assert answer.status_code == 409
    assert answer.json()["detail"].startswith("profile name 'site' is taken by the transport 'site' of plugin site")


def _site_version() -> str:
    from importlib.metadata import version

    return version("svc-plugin-example-site")


async def test_a_transport_built_on_a_profile_uses_that_profiles_mounts(
    svc_test_host: Host, svc_register_plugin: Callable[..., Any], tmp_path: Path
) -> None:
    """``TransportSpec(mounts_of="gpu")``: a workflow with ``mount=`` on the wrapping transport translates its paths
    with profile gpu's mount and syncs that mount with gpu's backend."""
    from svc_host.domain.profiles import Mount, SSHProfile
    from svc_host.plugin_core.records import TransportSpec
    from svc_host.settings.mounts import cluster_paths, mount_profile
    from svc_host.workflows.prepare import RunRequest, prepare
    from svc_plugin_ssh import hooks as ssh_hooks

    local = tmp_path / "proj"
    local.mkdir()
    mount = Mount(name="proj", local=str(local), remote="/scratch/ada/proj")
    svc_test_host.profiles.create("gpu", SSHProfile(hostname="gpu.example", username="ada", mounts=[mount]))
    await svc_test_host.reload_profiles()

    def site(*, host: Any) -> Wrapper:
        return Wrapper(host.transport("gpu"), ["--account=site"])

    spec = TransportSpec(name="site", factory=site, remote=True, mounts=True, mounts_of="gpu")
    svc_register_plugin(ssh_hooks, "ssh")
    svc_register_plugin(SimpleNamespace(svc_transports=hookimpl(lambda config: [spec])), "wrapper")
    assert mount_profile(spec) == "gpu"
    placed = cluster_paths(svc_test_host.transports.config.profiles, spec, "proj", work_dir="run", log_dir="logs")
    assert (placed.work_dir, placed.log_dir) == ("/scratch/ada/proj/run", "/scratch/ada/proj/logs")

    yaml = local / "wf.yaml"
    yaml.write_text("name: wf\njobs:\n  - name: a\n    command: echo hi\n")
    prepared = prepare(svc_test_host, RunRequest(yaml_path=yaml, transport="site", mount="proj"))
    assert prepared.new_run.sync_mounts == ["proj"]
    assert prepared.new_run.jobs[0].definition.work_dir == "/scratch/ada/proj"

    with pytest.raises(ValueError, match="mounts_of='gpu' requires mounts=True"):
        TransportSpec(name="site", factory=site, remote=True, mounts_of="gpu")
