"""What a job submitted by the ``local`` transport inherits from svc's own environment (dev cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.domain.jobs import JobState
from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.testing.waiting import wait_for_state
from svc_plugin_local.transport import LocalTransport

pytestmark = pytest.mark.cluster


async def test_svc_secrets_do_not_reach_the_job(
    slurm_cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_API_TOKEN", "token-of-the-server-0123")
    monkeypatch.setenv("SVC_DATABASE_URL", "postgresql://svc:hunter2@db.example.org/svc")
    monkeypatch.setenv("CHAT_WEBHOOK_URL", "https://hooks.example.org/secret-hook")
    monkeypatch.setenv("SVC_SECRET_ENV", "MY_SECRET, TEAM_*")
    monkeypatch.setenv("MY_SECRET", "marked-by-the-user")
    monkeypatch.setenv("TEAM_KEY", "marked-by-prefix")
    monkeypatch.setenv("MY_SETTING", "kept-for-the-job")
    transport = LocalTransport()
    try:
        script = render_sbatch(JobDefinition(name="envcheck", command="env | sort", log_dir=str(tmp_path)))
        job_id = await transport.submit(script)
        await wait_for_state(transport, job_id, {JobState.COMPLETED}, timeout=60)
    finally:
        await transport.close()
    stdout, _ = script.log_paths_for(job_id)
    printed = (tmp_path / stdout).read_text()  # tmp_path / an absolute path is that path
    names = {line.partition("=")[0] for line in printed.splitlines()}
    assert "MY_SETTING=kept-for-the-job" in printed.splitlines()  # the rest of the environment is inherited
    assert "PATH" in names
    leaked = sorted(name for name in names if name.startswith("SVC_") or name in {"CHAT_WEBHOOK_URL", "MY_SECRET"})
    assert leaked == []
    assert "TEAM_KEY" not in names
    for secret in ("token-of-the-server-0123", "hunter2", "secret-hook", "marked-by"):
        assert secret not in printed
