"""List responses served from a scheduler snapshot: ``X-Svc-Snapshot-Age`` says how old the answer is (the
list shapes stay the spec's), and the body is encoded once per snapshot (``Snapshot.derive``)."""

from __future__ import annotations

from typing import Any

from svc_host.runtime.snapshots import Snapshot

SNAPSHOT_AGE = "X-Svc-Snapshot-Age"

SNAPSHOT_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "headers": {
            SNAPSHOT_AGE: {
                "description": "Seconds since the scheduler gave the answer shown (a snapshot shared by every "
                "client, at most about 1 s old), e.g. 0.412.",
                "schema": {"type": "string", "pattern": r"^\d+\.\d{3}$"},
            }
        }
    }
}
"""``responses=`` entry documenting the header in the OpenAPI."""


def snapshot_headers(snapshot: Snapshot[Any]) -> dict[str, str]:
    return {SNAPSHOT_AGE: f"{snapshot.age:.3f}"}
