"""An interrupted attempt's node is excluded from the next attempt's sbatch script when the job asks for it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from svc_host.domain.jobs import JobState
from svc_host.host import Host
from svc_host.testing.fake import FakeTransport, transport_plugin
from svc_host.testing.waiting import eventually
from svc_host.workflows.prepare import RunRequest
from svc_host.workflows.store import Attempt

FLOW = """\
name: flow
jobs:
  - name: train
    command: "true"
    on_interruption: {retries: 1, exclude_node: true}
"""


async def test_the_retry_of_a_node_failure_excludes_the_failed_node(
    svc_test_host: Host, svc_register_plugin: Callable[..., None], tmp_path: Path
) -> None:
    fake = FakeTransport("fake")
    svc_register_plugin(transport_plugin(fake))
    svc_test_host.monitor.min_interval, svc_test_host.monitor.max_interval = 0.05, 0.2
    (tmp_path / "flow.yaml").write_text(FLOW)
    engine = await svc_test_host.workflow_engine()
    snap = await engine.run(RunRequest(yaml_path=tmp_path / "flow.yaml", transport="fake"), triggered_by="cli")
    first = snap.jobs[0].job_id
    assert first is not None
    assert "--exclude" not in fake.scripts[first].text
    fake.jobs[first] = fake.jobs[first].model_copy(
        update={"state": JobState.NODE_FAIL, "raw_state": "NODE_FAIL", "node_list": "gpu07"}
    )
    await eventually(lambda: len(fake.scripts) == 2, what="a second attempt")
    second = max(fake.scripts, key=int)
    assert "#SBATCH --exclude=gpu07\n" in fake.scripts[second].text

    async def both_attempts() -> list[Attempt]:  # the second one is recorded once its sbatch answered
        attempts = await engine.attempts(snap.run.id)
        return attempts if len(attempts) == 2 else []

    attempts = await eventually(both_attempts)
    assert [a.reason for a in attempts] == ["NODE_FAIL: retried automatically, 1 of 1, excluding gpu07", None]
    await engine.cancel(snap.run.id)
