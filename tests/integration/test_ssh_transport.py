"""SSH-specific behaviour over the real loopback sshd: host keys, reconnects, quoting."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.profiles import SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.errors import TransportError
from svc_host.rendering.sbatch import render_sbatch
from svc_host.slurm.tags import lookup_argv
from svc_host.testing.waiting import wait_for_state
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster


@pytest.fixture
async def transport(dev_profile: SSHProfile) -> AsyncIterator[SSHTransport]:
    transport = SSHTransport("dev", dev_profile)
    yield transport
    await transport.close()


async def test_unknown_host_key_is_rejected_with_the_fix(dev_profile: SSHProfile, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    transport = SSHTransport("dev", dev_profile.model_copy(update={"known_hosts": str(empty)}))
    with pytest.raises(TransportError, match=r"host key of svcdev@127\.0\.0\.1:\d+ is not known .*ssh-keyscan"):
        await transport.run(["true"])


async def test_wrong_key_is_refused_with_a_hint(dev_profile: SSHProfile, tmp_path: Path) -> None:
    import asyncssh

    key = tmp_path / "other_key"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(key))
    transport = SSHTransport("dev", dev_profile.model_copy(update={"key_filename": str(key)}))
    with pytest.raises(TransportError, match="refused the key of profile 'dev'; check username and key_filename"):
        await transport.run(["true"])


async def test_commands_share_one_connection_and_survive_a_drop(transport: SSHTransport) -> None:
    first = await transport.run(["echo", "one"])
    conn = await transport.connection()
    second = await transport.run(["echo", "two"])
    assert (first.stdout, second.stdout) == ("one\n", "two\n")
    assert await transport.connection() is conn
    conn.abort()  # the network drops the connection under us
    third = await transport.run(["echo", "three"])
    assert third.stdout == "three\n"
    assert await transport.connection() is not conn


async def test_shell_metacharacters_are_data_not_code(
    transport: SSHTransport, cluster_path: Callable[[str], Path]
) -> None:
    marker = f"/tmp/svc-pwned-{uuid.uuid4().hex}"
    words = [f"$(touch {marker})", f"`touch {marker}`", f"; touch {marker}", "| cat", "'quoted' \"double\"", "ünï"]
    result = await transport.run(["printf", "%s\\n", *words])
    assert result.stdout.splitlines() == words
    assert not cluster_path(marker).exists()


async def test_hostile_job_name_is_submitted_verbatim(
    transport: SSHTransport, cluster_path: Callable[[str], Path]
) -> None:
    marker = f"/tmp/svc-pwned-{uuid.uuid4().hex}"
    name = f"a;b $(touch {marker}) | c 'q'"
    job_dir = f"svc-names-{uuid.uuid4().hex[:6]}"
    job_id = await transport.submit(render_sbatch(JobDefinition(name=name, command="true", log_dir=job_dir)))
    done = await wait_for_state(transport, job_id, {JobState.COMPLETED}, timeout=60)
    assert done.name == name
    assert not cluster_path(marker).exists()
    await transport.run(["rm", "-rf", "--", job_dir])


async def test_profile_env_values_reach_commands_as_data_never_as_code(
    dev_profile: SSHProfile, cluster_path: Callable[[str], Path]
) -> None:
    marker = f"/tmp/svc-pwned-{uuid.uuid4().hex}"
    hostile = f"$(touch {marker}); `touch {marker}` | touch {marker} # 'q' \"d\"\nnext line"
    transport = SSHTransport("dev", dev_profile.model_copy(update={"env_vars": {"SVC_T": hostile, "B_2": "x y"}}))
    try:
        result = await transport.run(["printenv", "SVC_T"])
        other = await transport.run(["printenv", "B_2"])
    finally:
        await transport.close()
    assert (result.exit_code, result.stdout) == (0, hostile + "\n")
    assert other.stdout == "x y\n"
    assert not cluster_path(marker).exists()


async def test_profile_env_values_never_reach_the_logs(
    dev_profile: SSHProfile, caplog: pytest.LogCaptureFixture
) -> None:
    secret = f"tok-{uuid.uuid4().hex}"
    transport = SSHTransport("dev", dev_profile.model_copy(update={"env_vars": {"API_TOKEN": secret}}))
    try:
        with caplog.at_level(logging.DEBUG):
            result = await transport.run(["printenv", "API_TOKEN"])
    finally:
        await transport.close()
    assert result.stdout == f"{secret}\n"
    assert "Command: env -- 'API_TOKEN=<redacted>' printenv API_TOKEN" in caplog.text  # asyncssh logged it
    assert secret not in caplog.text


async def test_a_hostile_env_key_is_refused_and_never_becomes_a_command(dev_profile: SSHProfile) -> None:
    with pytest.raises(ValueError, match="is not a variable name"):
        SSHProfile.model_validate({**dev_profile.model_dump(), "env_vars": {"-Secho INJECTED #": "x"}})
    # Even a profile built without validation cannot turn the env prefix into another command.
    unchecked = dev_profile.model_copy(update={"env_vars": {"-Secho INJECTED #": "x"}})
    transport = SSHTransport("dev", unchecked)
    try:
        result = await transport.run(["echo", "ran"])
    finally:
        await transport.close()
    assert "INJECTED" not in result.stdout + result.stderr


def write_ssh_config(home: Path, dev_profile: SSHProfile) -> None:
    """A user's ~/.ssh/config naming the dev cluster ``devalias`` (and how to reach 127.0.0.1 as a jump host)."""
    ssh = home / ".ssh"
    ssh.mkdir(mode=0o700, exist_ok=True)
    (ssh / "config").write_text(
        f"Host devalias\n  HostName {dev_profile.hostname}\n  Port {dev_profile.port}\n  User {dev_profile.username}\n"
        f"  IdentityFile {dev_profile.key_filename}\n  UserKnownHostsFile {dev_profile.known_hosts}\n\n"
        f"Host {dev_profile.hostname}\n  IdentityFile {dev_profile.key_filename}\n"
        f"  UserKnownHostsFile {dev_profile.known_hosts}\n"
    )


async def test_ssh_host_resolves_through_the_users_ssh_config(home: Path, dev_profile: SSHProfile) -> None:
    write_ssh_config(home, dev_profile)
    transport = SSHTransport("alias", SSHProfile(ssh_host="devalias"))
    try:
        result = await transport.run(["whoami"])
    finally:
        await transport.close()
    assert result.stdout == "svcdev\n"


async def test_proxy_jump_reaches_the_cluster_through_a_jump_host(home: Path, dev_profile: SSHProfile) -> None:
    """The target sshd sees a direct session come from one of this process's sockets, and a jumped one from the
    jump host's forwarded connection (not ours): a proof that holds while other tests use the same sshd."""
    write_ssh_config(home, dev_profile)
    jump = f"{dev_profile.username}@{dev_profile.hostname}:{dev_profile.port}"
    direct = SSHTransport("direct", dev_profile)
    jumped = SSHTransport("jumped", dev_profile.model_copy(update={"proxy_jump": jump}))
    where = ["sh", "-c", 'echo "$SSH_CONNECTION"; whoami']
    try:
        seen_direct = (await direct.run(where)).stdout.split()
        assert int(seen_direct[1]) in own_local_ports()
        await direct.close()
        seen_jumped = (await jumped.run(where)).stdout.split()
        assert int(seen_jumped[1]) not in own_local_ports()  # sshd's forward, on behalf of our jump session
    finally:
        await direct.close()
        await jumped.close()
    assert seen_jumped[-1] == "svcdev"


def own_local_ports() -> set[int]:
    """Local ports of this process's TCP sockets (its fds' socket inodes, looked up in /proc/net/tcp*)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


# -- a submission whose answer is lost ----------------------------------------------------------------------------

DROP_AFTER_SBATCH = """#!/bin/sh
# sbatch, then the connection dies before its answer is sent: kill this session's sshd process
# ("sshd-session" since OpenSSH 9.8, as on lab24).
out=$({sbatch} "$@")
echo "$out" > {record}
case "$(cat /proc/$PPID/comm)" in sshd|sshd-session) kill -9 "$PPID" ;; esac
sleep 30
"""

SLOW_AFTER_SBATCH = """#!/bin/sh
# sbatch, then an answer far slower than the transport's timeout.
out=$({sbatch} "$@")
echo "$out" > {record}
sleep 30
echo "$out"
"""


@pytest.fixture
def wrapped_sbatch(
    dev_profile: SSHProfile, cluster_path: Callable[[str], Path]
) -> Iterator[Callable[[str], tuple[SSHProfile, Path]]]:
    """A profile whose PATH finds a wrapper named ``sbatch`` first (in the cluster's /tmp); the wrapper writes the
    real answer to a file, returned as this machine sees it."""
    made: list[Path] = []

    def make(template: str) -> tuple[SSHProfile, Path]:
        remote = f"/tmp/svc-wrap-{uuid.uuid4().hex}"
        directory = cluster_path(remote)
        directory.mkdir(mode=0o777)
        directory.chmod(0o777)
        made.append(directory)
        wrapper = directory / "sbatch"
        system = "/usr/local/bin:/usr/bin:/bin"
        wrapper.write_text(template.format(sbatch=f"env PATH={system} sbatch", record=f"{remote}/answer"))
        wrapper.chmod(0o755)
        path = f"{remote}:{system}"
        return dev_profile.model_copy(update={"env_vars": {"PATH": path}}), directory / "answer"

    yield make
    for directory in made:
        shutil.rmtree(directory, ignore_errors=True)


async def transport_tags(transport: SSHTransport) -> dict[str, str]:
    """Job id -> comment of every job of the profile's user that slurmctld holds."""
    listed = await transport.check(lookup_argv())
    return {line.partition("|")[0].strip(): line.partition("|")[2].strip() for line in listed.splitlines()}


@pytest.mark.parametrize("template", [DROP_AFTER_SBATCH, SLOW_AFTER_SBATCH], ids=["connection-dropped", "timed-out"])
async def test_a_submission_whose_answer_is_lost_is_found_by_its_tag_and_never_duplicated(
    wrapped_sbatch: Callable[[str], tuple[SSHProfile, Path]], template: str
) -> None:
    profile, record = wrapped_sbatch(template)
    transport = SSHTransport("dev", profile, timeout=5)
    transport.reconcile_delays = (0.5, 1.0, 1.0, 2.0, 2.0, 3.0)
    job_dir = f"svc-lost-{uuid.uuid4().hex[:6]}"
    rendered = render_sbatch(JobDefinition(name="lost-answer", command="sleep 2", log_dir=job_dir))
    first = await transport.connection()
    try:
        job_id = await transport.submit(rendered)
        accepted = record.read_text().strip()
        assert job_id == accepted  # the job sbatch really created, not a second one
        if template is DROP_AFTER_SBATCH:
            assert await transport.connection() is not first  # the drop happened, and svc reconnected
        tags = await transport_tags(transport)
        assert tags[job_id].startswith("svc:")
        assert [other for other, tag in tags.items() if tag == tags[job_id]] == [job_id]  # exactly one job
        await wait_for_state(transport, job_id, {JobState.COMPLETED}, timeout=60)
    finally:
        await transport.run(["rm", "-rf", "--", job_dir])
        await transport.close()


async def test_a_gpu_type_reaches_slurm_as_typed_gres(transport: SSHTransport, dev_env: dict[str, str]) -> None:
    """``gpu_type`` becomes ``--gres=gpu:TYPE:N``: on a cluster with typed GPUs (lab24: a100 and v100) the job is given
    a GPU of that type; on one with untyped GPUs (the 22.05 dev cluster) sbatch's refusal reaches the user."""
    typed = [pair.split(":")[0] for pair in dev_env["SVC_DEV_GPU_TYPES"].split(",") if pair]
    kind = typed[-1] if typed else "a100"
    facts = f"/tmp/svc-gres-{uuid.uuid4().hex}"
    definition = JobDefinition(
        name="typed-gpu",
        command=f'scontrol show job "$SLURM_JOB_ID" > {facts}',
        resources={"gpus_per_node": 1, "gpu_type": kind},
    )
    if not typed:
        with pytest.raises(TransportError, match="node configuration is not available"):
            await transport.submit(render_sbatch(definition))
        return
    job_id = await transport.submit(render_sbatch(definition))
    await wait_for_state(transport, job_id, {JobState.COMPLETED}, timeout=60)
    shown = (await transport.run(["cat", facts])).stdout
    await transport.run(["rm", "-f", "--", facts])
    assert f"gres/gpu:{kind}=1" in shown  # AllocTRES: one GPU of the asked type, none of the other
    assert not any(f"gres/gpu:{other}=" in shown for other in typed if other != kind)
