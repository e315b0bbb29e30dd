"""The types a plugin receives through public signatures are public names too: a transport that implements
``statuses``/``describe``/``read_log`` or a renderer that reads ``JobDefinition.environment`` must be able to name
what it returns or reads without importing an internal module."""

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
    ],
)
def test_a_type_of_a_public_signature_is_public(public: str, where: typing.Callable[[], object]) -> None:
    assert public in api.__all__
    assert getattr(api, public) in named(where())
