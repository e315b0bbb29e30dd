"""Login nodes as users meet them: an sshd that refuses sftp, its session limit, bastions, ~/.ssh/config habits.

The dev sshd (127.0.0.1:2222, sftp served) is the bastion; ``scripts/devsshd`` (127.0.0.1:2223, no sftp, its own
host key and client key) is the login node behind it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from svc_host.domain.profiles import SSHProfile
from svc_host.errors import SyncError, TransportError
from svc_host.plugin import FileState as RecordState
from svc_plugin_rsync.remote import RemoteFiles
from svc_plugin_ssh.transport import SSHTransport
from tests.integration.test_ssh_transport import own_local_ports

pytestmark = pytest.mark.cluster

WHERE = ["sh", "-c", 'echo "$SSH_CONNECTION"; whoami']


@pytest.fixture
async def nosftp(nosftp_profile: SSHProfile) -> AsyncIterator[SSHTransport]:
    transport = SSHTransport("bare", nosftp_profile)
    yield transport
    await transport.close()


@pytest.fixture
async def remote_dir(nosftp: SSHTransport) -> AsyncIterator[str]:
    """A fresh directory of svcdev's on the cluster, removed afterwards."""
    path = f"/tmp/svc-bare-{uuid.uuid4().hex[:8]}"
    await nosftp.check(["mkdir", "-p", "--", path])
    yield path
    await nosftp.check(["rm", "-rf", "--", path])


# -- no sftp -------------------------------------------------------------------------------------------------------

CONTENT = "".join(f"línea {i}: ✓ ünï\n" for i in range(300)).encode()


async def test_logs_are_read_byte_exact_with_the_same_offsets_where_sftp_is_refused(
    nosftp: SSHTransport, dev_profile: SSHProfile, remote_dir: str
) -> None:
    path = f"{remote_dir}/job.out"
    await nosftp.check(["sh", "-c", 'cat > "$1"', "sh", path], stdin=CONTENT.decode())
    served = SSHTransport("served", dev_profile)
    try:
        for offset, limit in [(0, 256 * 1024), (0, 100), (7, 50), (1000, 333), (len(CONTENT) - 10, 100)]:
            bare, sftp = (
                await nosftp.read_log(path, offset=offset, limit=limit),
                await served.read_log(path, offset=offset, limit=limit),
            )
            assert bare == sftp
            assert bare.size == len(CONTENT)
            assert CONTENT[bare.offset : bare.next_offset].decode() == bare.content
        assert not served.sftp_refused
    finally:
        await served.close()
    assert nosftp.sftp_refused
    missing = await nosftp.read_log(f"{remote_dir}/nothing.out")
    assert (missing.exists, missing.content) == (False, "")
    with pytest.raises(TransportError, match=r"permission denied reading /etc/shadow on 'bare'"):
        await nosftp.read_log("/etc/shadow")


async def test_the_refusal_is_remembered_per_connection(nosftp: SSHTransport, remote_dir: str) -> None:
    path = f"{remote_dir}/a.out"
    await nosftp.check(["sh", "-c", 'printf abc > "$1"', "sh", path])
    conn = await nosftp.connection()
    asked = 0
    start = conn.start_sftp_client

    async def counted() -> object:
        nonlocal asked
        asked += 1
        return await start()

    conn.start_sftp_client = counted  # type: ignore[method-assign]
    chunks = await asyncio.gather(*(nosftp.read_log(path) for _ in range(16)))
    assert [chunk.content for chunk in chunks] == ["abc"] * 16
    assert asked == 1
    await nosftp.close()  # a new connection asks again
    assert not nosftp.sftp_refused
    assert (await nosftp.read_log(path)).content == "abc"
    assert await nosftp.connection() is not conn
    assert nosftp.sftp_refused


async def test_sync_files_are_listed_read_and_written_without_sftp(
    nosftp_profile: SSHProfile, nosftp: SSHTransport, remote_dir: str
) -> None:
    """rsync's files of svc (record, owner marker) go through the transport's commands: a login node that refuses
    sftp is no different."""
    files = RemoteFiles("bare", nosftp_profile, nosftp)
    await files.makedirs(f"{remote_dir}/sub/deeper")
    await files.write_atomic(f"{remote_dir}/sub/record.json", b'{"a": 1}\n')
    await files.write_atomic(f"{remote_dir}/sub/record.json", b'{"a": 2}\n')  # replaces
    await nosftp.check(["ln", "-s", "/etc/hostname", f"{remote_dir}/sub/link"])
    assert sorted(await files.entries(f"{remote_dir}/sub", limit=10) or []) == ["deeper", "link", "record.json"]
    assert await files.entries(f"{remote_dir}/nope", limit=10) is None
    ok = await files.read(f"{remote_dir}/sub/record.json", limit=100)
    assert (ok.state, ok.data) == (RecordState.OK, b'{"a": 2}\n')
    assert (await files.read(f"{remote_dir}/sub/link", limit=100)).state is RecordState.SYMLINK
    assert (await files.read("/etc/hostname", limit=100)).state is RecordState.FOREIGN
    assert (await files.read(f"{remote_dir}/sub/record.json", limit=3)).state is RecordState.UNREADABLE
    assert (await files.read(f"{remote_dir}/none", limit=3)).state is RecordState.MISSING
    assert await files.realpath(f"{remote_dir}/sub/link") == "/etc/hostname"
    assert await files.realpath(f"{remote_dir}/none") is None
    mode = await nosftp.check(["stat", "-c", "%a", "--", f"{remote_dir}/sub/record.json"])
    assert mode.strip() == "600"
    with pytest.raises(SyncError, match=r"cannot create remote directory '/proc/x' on .*: mkdir"):
        await files.makedirs("/proc/x")


async def test_past_the_sshds_session_limit_the_error_names_the_limit(nosftp_profile: SSHProfile) -> None:
    """max_channels 12 on an sshd with MaxSessions 10: two of twelve long commands are refused (twice), with a
    message naming the limit; the ten others run to the end on the same, unbroken connection."""
    transport = SSHTransport("tight", nosftp_profile.model_copy(update={"max_channels": 12}))
    try:
        results = await asyncio.gather(
            *(transport.run(["sh", "-c", "sleep 6; echo done"]) for _ in range(12)), return_exceptions=True
        )
    finally:
        await transport.close()
    refused = [str(result) for result in results if isinstance(result, Exception)]
    assert [result.stdout for result in results if not isinstance(result, BaseException)] == ["done\n"] * 10
    assert len(refused) == 2
    assert all("refused a new session" in text and "lower max_channels" in text for text in refused)
    assert not any("lost" in text for text in refused)


# -- bastions and ~/.ssh/config -----------------------------------------------------------------------------------


def write_config(home: Path, text: str) -> None:
    ssh = home / ".ssh"
    ssh.mkdir(mode=0o700, exist_ok=True)
    (ssh / "config").write_text(text)


def bastion_and_login(dev_profile: SSHProfile, nosftp_profile: SSHProfile, *, jump_key: str, jumps: str) -> str:
    """~/.ssh/config: ``bastion`` = the dev sshd with ``jump_key``, ``login`` = the sftp-less sshd behind it."""
    return (
        f"Host bastion bastion2\n  HostName {dev_profile.hostname}\n  Port {dev_profile.port}\n"
        f"  User {dev_profile.username}\n  IdentityFile {jump_key}\n  UserKnownHostsFile {dev_profile.known_hosts}\n\n"
        f"Host login\n  HostName {nosftp_profile.hostname}\n  Port {nosftp_profile.port}\n"
        f"  User {nosftp_profile.username}\n  IdentityFile {nosftp_profile.key_filename}\n"
        f"  UserKnownHostsFile {nosftp_profile.known_hosts}\n  ProxyJump {jumps}\n"
    )


@pytest.mark.parametrize("jumps", ["bastion", "bastion,bastion2"], ids=["one-jump", "chain"])
async def test_an_alias_behind_a_bastion_with_a_key_per_host(
    home: Path, dev_profile: SSHProfile, nosftp_profile: SSHProfile, jumps: str
) -> None:
    write_config(home, bastion_and_login(dev_profile, nosftp_profile, jump_key=dev_profile.key_filename, jumps=jumps))
    transport = SSHTransport("behind", SSHProfile(ssh_host="login"))
    try:
        seen = (await transport.run(WHERE)).stdout.split()
        assert int(seen[1]) not in own_local_ports()  # the login node saw the bastion's forward, not us
        assert seen[-1] == "svcdev"
        assert seen[3] == str(nosftp_profile.port)
    finally:
        await transport.close()


async def test_a_key_the_bastion_refuses_is_blamed_on_the_bastion(
    home: Path, dev_profile: SSHProfile, nosftp_profile: SSHProfile
) -> None:
    # the login node's key is not the bastion's
    config = bastion_and_login(dev_profile, nosftp_profile, jump_key=nosftp_profile.key_filename, jumps="bastion")
    write_config(home, config)
    transport = SSHTransport("behind", SSHProfile(ssh_host="login"))
    with pytest.raises(TransportError, match=r"^jump host bastion \(hop 1 of 1\) refused the key of profile 'behind'"):
        await transport.run(["true"])


async def test_a_key_the_target_refuses_is_blamed_on_the_target(
    home: Path, dev_profile: SSHProfile, nosftp_profile: SSHProfile
) -> None:
    write_config(home, f"Host 127.0.0.1\n  IdentityFile {dev_profile.key_filename}\n")
    jump = f"{dev_profile.username}@{dev_profile.hostname}:{dev_profile.port}"
    (home / ".ssh" / "known_hosts").write_text(Path(str(dev_profile.known_hosts)).read_text())
    wrong = nosftp_profile.model_copy(update={"proxy_jump": jump, "key_filename": dev_profile.key_filename})
    transport = SSHTransport("behind", wrong)
    with pytest.raises(TransportError, match=r"^svcdev@127\.0\.0\.1:2223 via svcdev@127\.0\.0\.1:2222 refused the key"):
        await transport.run(["true"])


async def test_an_unknown_bastion_host_key_is_blamed_on_the_bastion(
    home: Path, dev_profile: SSHProfile, nosftp_profile: SSHProfile
) -> None:
    write_config(home, f"Host 127.0.0.1\n  IdentityFile {dev_profile.key_filename}\n")  # ~/.ssh/known_hosts: none
    jump = f"{dev_profile.username}@{dev_profile.hostname}:{dev_profile.port}"
    transport = SSHTransport("behind", nosftp_profile.model_copy(update={"proxy_jump": jump}))
    with pytest.raises(TransportError, match=r"^host key of jump host svcdev@127\.0\.0\.1:2222 \(hop 1 of 1\) is not"):
        await transport.run(["true"])


async def test_hashed_known_hosts_are_understood(nosftp_profile: SSHProfile, tmp_path: Path) -> None:
    hashed = tmp_path / "known_hosts"
    shutil.copy(str(nosftp_profile.known_hosts), hashed)
    await asyncio.to_thread(subprocess.run, ["ssh-keygen", "-H", "-f", str(hashed)], check=True, capture_output=True)
    assert "127.0.0.1" not in hashed.read_text()
    transport = SSHTransport("hashed", nosftp_profile.model_copy(update={"known_hosts": str(hashed)}))
    try:
        assert (await transport.run(["whoami"])).stdout == "svcdev\n"
    finally:
        await transport.close()


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private ssh-agent (its socket in SSH_AUTH_SOCK), stopped afterwards."""
    socket = tmp_path / "agent.sock"
    started = subprocess.run(["ssh-agent", "-s", "-a", str(socket)], capture_output=True, text=True, check=True)
    pid = int(started.stdout.split("SSH_AGENT_PID=")[1].split(";")[0])
    monkeypatch.setenv("SSH_AUTH_SOCK", str(socket))
    yield socket
    os.kill(pid, 15)


def encrypted_copy(key: str, target: Path, passphrase: str) -> Path:
    shutil.copy(key, target)
    target.chmod(0o600)
    subprocess.run(["ssh-keygen", "-p", "-P", "", "-N", passphrase, "-f", str(target)], check=True, capture_output=True)
    return target


async def test_an_encrypted_key_works_through_ssh_agent(
    agent: Path, nosftp_profile: SSHProfile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = encrypted_copy(str(nosftp_profile.key_filename), tmp_path / "id_locked", "open sesame")
    profile = nosftp_profile.model_copy(update={"key_filename": str(key)})
    monkeypatch.delenv("SSH_AUTH_SOCK")
    with pytest.raises(TransportError, match="is encrypted and no ssh-agent is reachable: run `ssh-add"):
        await SSHTransport("locked", profile).run(["true"])
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    askpass = tmp_path / "askpass"
    askpass.write_text("#!/bin/sh\necho 'open sesame'\n")
    askpass.chmod(0o700)
    env = {**os.environ, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"}
    added = ["ssh-add", str(key)]
    await asyncio.to_thread(subprocess.run, added, env=env, stdin=subprocess.DEVNULL, check=True, capture_output=True)
    transport = SSHTransport("locked", profile)
    try:
        assert (await transport.run(["whoami"])).stdout == "svcdev\n"
    finally:
        await transport.close()
