"""``list_jobs`` through a profile that names only an ~/.ssh/config alias (no username) lists the jobs of the
user the alias logs in as, not everyone's. Dev cluster: the alias reaches the loopback sshd as svcdev, while
this process submits locally as itself."""

from __future__ import annotations

import getpass
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from svc_host.domain.profiles import SSHProfile

pytestmark = pytest.mark.cluster


def owners(job_ids: list[str]) -> set[str]:
    argv = ["sacct", "-a", "-X", "-n", "-P", "-o", "User", "-j", ",".join(job_ids)]
    return set(subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split())


async def test_an_alias_without_username_lists_its_login_users_jobs(
    svc_home: dict[str, str],
    write_profiles: Callable[[dict[str, Any]], None],
    dev_profile: SSHProfile,
    mcp_factory: Callable[[], Any],
) -> None:
    ssh = Path(svc_home["HOME"]) / ".ssh"
    ssh.mkdir(mode=0o700)
    (ssh / "config").write_text(
        f"Host devalias\n  HostName {dev_profile.hostname}\n  Port {dev_profile.port}\n  User {dev_profile.username}\n"
        f"  IdentityFile {dev_profile.key_filename}\n  UserKnownHostsFile {dev_profile.known_hosts}\n"
    )
    write_profiles({"profiles": {"alias": {"ssh_host": "devalias"}}})
    me = getpass.getuser()
    assert me != dev_profile.username
    async with mcp_factory() as mcp:
        mine = await mcp("submit_job", command="sleep 120", name="local-one")
        theirs = await mcp("submit_job", command="sleep 120", name="alias-one", transport="alias", work_dir="svc-t")
        assert mine["success"], mine
        assert theirs["success"], theirs
        try:
            over_alias = await mcp("list_jobs", transport="alias")
            local = await mcp("list_jobs")
        finally:
            await mcp("cancel_job", job_id=mine["job_id"])
            await mcp("cancel_job", job_id=theirs["job_id"], transport="alias")
    assert over_alias["success"], over_alias
    alias_ids = [job["job_id"] for job in over_alias["jobs"]]
    assert theirs["job_id"] in alias_ids
    assert mine["job_id"] not in alias_ids
    assert owners(alias_ids) == {dev_profile.username}
    local_ids = [job["job_id"] for job in local["jobs"]]
    assert mine["job_id"] in local_ids
    assert theirs["job_id"] not in local_ids
    assert owners(local_ids) == {me}
