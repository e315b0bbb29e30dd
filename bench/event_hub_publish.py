"""Benchmark: publishing to the event hub while a reader never reads (the speed tests/unit/test_event_hub.py and
tests/api/test_events_api.py no longer time: a pass/fail margin on a busy machine proves nothing).

Publishes ``--events`` job events to an ``EventHub`` with one stalled subscriber and with none, ``--repeat``
times each, and prints the microseconds per publish (median and worst run). The stalled reader keeps only the
newest ``capacity`` events, so both should cost the same.

    python bench/event_hub_publish.py [--events 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from svc_host.plugin_core.records import Event
from svc_host.runtime.events import EventHub


async def publish_all(events: int, *, stalled: bool) -> float:
    """Seconds to publish ``events`` job events to a fresh hub (with one reader that never reads if ``stalled``)."""
    hub = EventHub(capacity=8)
    if stalled:
        hub.subscribe()
    made = [
        Event(name="job.status_changed", payload={"transport": "t", "job_id": str(n), "to": "RUNNING"})
        for n in range(events)
    ]
    started = time.perf_counter()
    for event in made:
        hub.publish(event)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    for stalled in (False, True):
        runs = [
            asyncio.run(publish_all(options.events, stalled=stalled)) * 1e6 / options.events
            for _ in range(options.repeat)
        ]
        label = "one stalled reader" if stalled else "no reader         "
        print(f"{label}: {statistics.median(runs):7.2f} us/publish median, {max(runs):7.2f} worst")


if __name__ == "__main__":
    main()
