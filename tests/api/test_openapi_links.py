"""The served OpenAPI document links each created resource to the operations that take it (issue 26, item 5), so
schemathesis' stateful phase (tests/api/test_schemathesis.py) and any client generator can chain them."""

from __future__ import annotations

from typing import Any

import httpx
import schemathesis

from svc_host.api.openapi_links import LINKS


async def test_every_link_is_served_and_names_an_operation_that_exists(svc_api_client: httpx.AsyncClient) -> None:
    document = (await svc_api_client.get("/openapi.json")).json()
    paths = document["paths"]
    operation_ids = {op["operationId"] for operations in paths.values() for op in operations.values()}
    for ((method, path), status), links in LINKS.items():
        served = paths[path][method]["responses"][status].get("links", {})
        assert set(served) == set(links), (method, path)
        for name, ((target_method, target_path), parameters) in links.items():
            assert served[name]["operationId"] == paths[target_path][target_method]["operationId"]
            assert served[name]["operationId"] in operation_ids
            assert served[name]["parameters"] == parameters
    job_link = paths["/api/jobs"]["post"]["responses"]["201"]["links"]["GetJob"]["parameters"]
    assert job_link == {"path.job_id": "$response.body#/job_id", "query.transport": "$request.query.transport"}


async def test_schemathesis_reads_the_links_as_transitions(svc_api_client: httpx.AsyncClient) -> None:
    """Every link resolves (a parameter the target lacks, or an expression naming a request parameter the source
    lacks, would make schemathesis refuse the machine)."""
    document = (await svc_api_client.get("/openapi.json")).json()
    schema = schemathesis.openapi.from_dict(document)
    schema.config.phases.stateful.inference.algorithms = []  # only the served links, nothing inferred
    machine: Any = schema.as_state_machine()
    operations = machine._transitions.operations.values()  # schemathesis' own record of the links it read
    transitions = {(link.source.label, link.status_code, link.name) for op in operations for link in op.outgoing}
    assert ("POST /api/jobs", "201", "GetJob") in transitions
    assert len(transitions) == sum(len(links) for links in LINKS.values())
