"""The types a plugin receives through public signatures are public names too: a transport that implements
``statuses``/``describe``/``read_log``/``nodes``/``resources``, or a plugin that reads ``JobDefinition.environment`` or
``SvcConfig.notifications``/``rendering``, must be able to name what it returns or reads without importing an internal
module. (test_signature_types_are_public.py walks every public signature for the next one.)"""

from __future__ import annotations

import typing

import pytest

import svc_host.plugin as api
from svc_host import testing


def named(hint: object) -> set[object]:
    """``hint`` and every type inside it (``dict[str, JobStatus]``, ``JobStatus | None``)."""
    return {hint}.union(*(named(argument) for argument in typing.get_args(hint)))


@pytest.mark.parametrize(
    ("public", "where"),
    [
        ("Environment", lambda: api.JobDefinition.model_fields["environment"].annotation),
        ("JobStatus", lambda: typing.get_type_hints(api.Transport.statuses)["return"]),
        ("JobStatus", lambda: typing.get_type_hints(api.Transport.describe)["return"]),
        ("JobStatus", lambda: typing.get_type_hints(testing.wait_for_state)["return"]),
        ("LogChunk", lambda: typing.get_type_hints(api.Transport.read_log)["return"]),
        ("NodeInfo", lambda: typing.get_type_hints(api.SlurmTransport.nodes)["return"]),
        ("ResourceSnapshot", lambda: typing.get_type_hints(api.SlurmTransport.resources)["return"]),
        ("ResourceSnapshot", lambda: typing.get_type_hints(api.Transport.resources_total)["return"]),
        ("GpuTypeAvailability", lambda: api.ResourceSnapshot.model_fields["gpu_types"].annotation),
        ("Notifications", lambda: api.SvcConfig.model_fields["notifications"].annotation),
        ("Rendering", lambda: api.SvcConfig.model_fields["rendering"].annotation),
    ],
)
def test_a_type_of_a_public_signature_is_public(public: str, where: typing.Callable[[], object]) -> None:
    assert public in api.__all__
    assert getattr(api, public) in named(where())
