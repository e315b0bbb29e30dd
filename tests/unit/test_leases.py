"""The lease keeper on a real SQLite store: renewals reach ``on_held``, a server takes over what nobody drives."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from svc_host.runtime.leases import LeaseKeeper
from svc_host.store.database import Store
from svc_host.testing.waiting import eventually
from svc_host.workflows import store as repo
from svc_host.workflows.store import RUN_LEASES


def keeper(store: Store, owner: str, *, adopt: bool, held: list[list[str]], taken: list[str]) -> LeaseKeeper[str]:
    async def on_taken(run_id: str) -> None:
        taken.append(run_id)

    return LeaseKeeper(
        store,
        RUN_LEASES,
        owner,
        lease=timedelta(seconds=5),  # the takeover below comes well within it, however busy the machine
        every=0.1,
        adopt=adopt,
        on_held=held.append,
        on_taken=on_taken,
        label="workflow run",
    )


async def test_a_server_takes_over_a_run_whose_holder_stopped_renewing(database_url: str) -> None:
    store = Store(database_url)
    for run_id in ("r1", "cell"):
        status = "pending" if run_id == "cell" else "running"  # a pending sweep cell waits for its sweep
        store.call(repo.insert_run, repo.NewRun("wf", "/wf.yaml", {}, {}, "local", None, [], []), run_id=run_id,
                   status=status, triggered_by="cli")  # fmt: skip
    first_held: list[list[str]] = []
    first = keeper(store, "first", adopt=False, held=first_held, taken=[])
    assert await first.claim("r1") is True
    running = asyncio.create_task(first.run())
    await eventually(lambda: first_held)
    assert first_held[-1] == ["r1"]  # renewed
    running.cancel()  # the holder dies without releasing
    second_held: list[list[str]] = []
    taken: list[str] = []
    second = keeper(store, "second", adopt=True, held=second_held, taken=taken)
    assert await second.claim("r1") is False  # the lease has not run out yet
    adopting = asyncio.create_task(second.run())
    await eventually(lambda: taken, what="the takeover once the lease ran out")
    adopting.cancel()
    assert taken == ["r1"]
    await second.release()
    assert store.call(RUN_LEASES.orphaned) == [("r1", None)]
    store.close()
