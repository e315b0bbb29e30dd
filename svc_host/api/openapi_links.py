"""OpenAPI links in the served schema: which answer's value names the resource another operation takes.

A client (schemathesis' stateful phase, a generator of clients, a reader of ``/docs``) learns from them that
``POST /api/jobs``'s ``job_id`` is what ``GET``/``DELETE /api/jobs/{job_id}`` want, with the same cluster, and
so on for workflows, their runs, sessions, profiles, schedules and mounts. Written once here, as a
post-processing of the generated schema, because FastAPI has no per-route way to name another route's
``operationId``. A link whose source or target operation is not served (a plugin's route absent) is left out.

Deliberately not linked: activating or testing a profile just created (that points the server at, or connects
to, a host the creator named) and running a schedule (it starts a workflow): a client does these on purpose.
"""

from __future__ import annotations

from typing import Any

Operation = tuple[str, str]
"""(method, path) as the schema spells them: ``("post", "/api/jobs")``."""

_JOB = {"path.job_id": "$response.body#/job_id", "query.transport": "$request.query.transport"}
_SESSION = {"path.job_id": "$response.body#/job_id", "query.transport": "$response.body#/cluster"}
_WORKFLOW = {"path.name": "$response.body#/name"}
_RUN = {"path.run_id": "$response.body#/id"}
_PROFILE = {"path.name": "$request.body#/name"}
_SCHEDULE = {"path.name": "$response.body#/name"}
_MOUNT = {"path.mount_name": "$response.body#/name"}

LINKS: dict[tuple[Operation, str], dict[str, tuple[Operation, dict[str, str]]]] = {
    (("post", "/api/jobs"), "201"): {
        "GetJob": (("get", "/api/jobs/{job_id}"), _JOB),
        "GetJobLogs": (("get", "/api/jobs/{job_id}/logs"), _JOB),
        "CancelJob": (("delete", "/api/jobs/{job_id}"), _JOB),
    },
    (("post", "/api/workflows/create"), "200"): {
        "GetWorkflow": (("get", "/api/workflows/{name}"), _WORKFLOW),
        "RunWorkflow": (("post", "/api/workflows/{name}/run"), _WORKFLOW),
        "DeleteWorkflow": (("delete", "/api/workflows/{name}"), _WORKFLOW),
    },
    (("post", "/api/workflows/{name}/run"), "202"): {
        "GetRun": (("get", "/api/workflows/runs/{run_id}"), _RUN),
        "CancelRun": (("post", "/api/workflows/runs/{run_id}/cancel"), _RUN),
    },
    (("post", "/api/sessions"), "201"): {
        "GetSession": (("get", "/api/sessions/{job_id}"), _SESSION),
        "StopSession": (("delete", "/api/sessions/{job_id}"), _SESSION),
        "SessionLink": (("post", "/api/sessions/{job_id}/link"), _SESSION),
    },
    (("post", "/api/config/ssh/profiles"), "200"): {
        "UpdateProfile": (("put", "/api/config/ssh/profiles/{name}"), _PROFILE),
        "AddProfileMount": (("post", "/api/config/ssh/profiles/{name}/mounts"), _PROFILE),
        "DeleteProfile": (("delete", "/api/config/ssh/profiles/{name}"), _PROFILE),
    },
    (("post", "/api/schedules"), "201"): {
        "GetSchedule": (("get", "/api/schedules/{name}"), _SCHEDULE),
        "ReplaceSchedule": (("put", "/api/schedules/{name}"), _SCHEDULE),
        "DeleteSchedule": (("delete", "/api/schedules/{name}"), _SCHEDULE),
    },
    (("post", "/api/files/mounts"), "200"): {
        "GetProjectConfig": (("get", "/api/config/projects/{mount_name}"), _MOUNT),
        "DeleteMount": (("delete", "/api/files/mounts/{mount_name}"), _MOUNT),
    },
}


def add_links(schema: dict[str, Any]) -> None:
    """Put ``LINKS`` into ``schema``'s responses (in place), naming each target by its ``operationId``."""
    paths: dict[str, dict[str, Any]] = schema.get("paths", {})

    def operation(method: str, path: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = paths.get(path, {}).get(method)
        return found

    for ((method, path), status), links in LINKS.items():
        source = operation(method, path)
        response = (source or {}).get("responses", {}).get(status)
        if response is None:
            continue
        for name, ((target_method, target_path), parameters) in links.items():
            target = operation(target_method, target_path)
            if target is not None and "operationId" in target:
                response.setdefault("links", {})[name] = {
                    "operationId": target["operationId"],
                    "parameters": dict(parameters),
                }
