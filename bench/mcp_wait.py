"""Benchmark: how soon ``wait_for_change`` wakes after a job ends, next to a raw ``squeue`` poll every 0.1 s.

Needs the local Slurm of the dev cluster (``scripts/devcluster up``). One ``svc mcp`` (official client, stdio) in a
temporary svc home submits ``sleep 3`` jobs; once a job runs, this process polls ``squeue --jobs`` every 0.1 s
(the tightest loop an agent could write, and the load svc spares the scheduler) while the agent's
``wait_for_change(job_id, since_status=RUNNING)`` waits in the server. Printed per job: when the raw poll saw the
job leave RUNNING, how much later the wait returned (the monitor ticks every second while a wait is open),
and how many ``squeue`` the raw poll ran meanwhile.

    python bench/mcp_wait.py [--jobs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from typing import Any

from mcp import Client
from mcp_startup import server_params

POLL_SECONDS = 0.1


async def raw_state(job_id: str) -> str:
    process = await asyncio.create_subprocess_exec(
        "squeue", "--noheader", "--states=all", f"--jobs={job_id}", "--format=%T",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    out, _ = await process.communicate()
    return out.decode().strip() or "GONE"


async def poll_until_ended(job_id: str) -> tuple[float, int]:
    """When a raw squeue loop first saw the job out of RUNNING/COMPLETING, and how many squeue it ran."""
    polls = 0
    while True:
        polls += 1
        if await raw_state(job_id) not in ("RUNNING", "COMPLETING", "PENDING", "CONFIGURING"):
            return time.perf_counter(), polls
        await asyncio.sleep(POLL_SECONDS)


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        async with Client(server_params(home)) as client:

            async def tool(tool_name: str, **arguments: Any) -> dict[str, Any]:
                content = (await client.call_tool(tool_name, arguments)).structured_content
                if not content or not content.get("success"):
                    raise SystemExit(f"{tool_name} failed: {content}")
                return content

            lags, polls_made = [], []
            print("job      raw poll saw the end   wait_for_change returned   squeue run by the raw poll")
            for _ in range(count):
                job_id = (await tool("submit_job", command="sleep 3", name="bench-wait", partition="debug"))["job_id"]
                status = "PENDING"
                while status != "RUNNING":
                    answer = await tool("wait_for_change", job_id=job_id, since_status=status, timeout_seconds=120)
                    status = answer["status"]
                    if answer["final"]:
                        raise SystemExit(f"job {job_id} ended before it was seen running: {answer}")
                start = time.perf_counter()
                waited = asyncio.ensure_future(
                    tool("wait_for_change", job_id=job_id, since_status="RUNNING", timeout_seconds=120)
                )
                (raw_end, polls), answer = await asyncio.gather(poll_until_ended(job_id), waited)
                svc_end = time.perf_counter()
                if not answer["changed"]:
                    raise SystemExit(f"the wait timed out: {answer}")
                lags.append(svc_end - raw_end)
                polls_made.append(polls)
                print(
                    f"{job_id:8} {raw_end - start:8.2f} s after running   {svc_end - raw_end:+8.2f} s later "
                    f"({answer['status']})        {polls}"
                )
    print(f"median: wait_for_change returned {statistics.median(lags):+.2f} s after the raw 0.1 s poll saw the end;")
    print(f"the raw poll ran {statistics.median(polls_made):.0f} squeue per job, the wait none of its own")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", type=int, default=5)
    asyncio.run(main(parser.parse_args().jobs))
