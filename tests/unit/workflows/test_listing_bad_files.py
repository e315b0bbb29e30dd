"""MCP ``list_workflows``' scan: a file whose reading fails in a way svc did not foresee is left out and logged,
and every other workflow is still listed (the spec's entries have no field for an error)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from svc_host.workflows import source
from svc_host.workflows.files import scan


def test_one_unreadable_file_does_not_hide_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "good.yaml").write_text("name: good\njobs: [{name: a, command: echo}]\n")
    (tmp_path / "odd.yaml").write_text("name: odd\njobs: [{name: a, command: odd}]\n")
    real = source.parse

    def parse(text: str) -> Any:
        if "odd" in text:
            raise RuntimeError("a bug svc did not foresee")
        return real(text)

    monkeypatch.setattr(source, "parse", parse)
    with caplog.at_level(logging.ERROR, logger="svc_host.workflows.files"):
        found = scan(tmp_path, [tmp_path])
    assert [item.name for item in found] == ["good"]
    assert any("odd.yaml" in record.getMessage() for record in caplog.records), caplog.records
