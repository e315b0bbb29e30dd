"""Reading many sessions' ``endpoint.json`` in one command: the real shell loop on this machine's files, and
what its output is taken to say (only whole endpoints about the job asked)."""

from __future__ import annotations

import json
from pathlib import Path

from svc_host.sessions import endpoints
from svc_plugin_local.transport import LocalTransport


async def test_one_command_reads_every_directorys_endpoint_in_order(tmp_path: Path) -> None:
    names = ["up", "not yet", "partial", "other job", "odd $(name)"]
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / "up" / "endpoint.json").write_text(json.dumps({"host": "node1", "port": 4242, "job_id": "1"}))
    (tmp_path / "partial" / "endpoint.json").write_text('{"host": "node1", "po')
    (tmp_path / "other job" / "endpoint.json").write_text('{"host": "n", "port": 1, "job_id": "9"}')
    (tmp_path / "odd $(name)" / "endpoint.json").write_text('{\n "host": "node5",\n "port": 5,\n "job_id": "5"\n}\n')
    asked = [(str(i + 1), str(tmp_path / name)) for i, name in enumerate(names)]
    assert await endpoints.read_all(LocalTransport(), asked) == {"1": ("node1", 4242), "5": ("node5", 5)}


def test_lines_that_are_not_a_whole_endpoint_are_left_out() -> None:
    asked = [("1", "/a"), ("2", "/b"), ("3", "/c"), ("4", "/d")]
    out = '{"host": "n1", "port": 70000}\n[1]\n{"host": "n3", "port": 3}\n'
    assert endpoints.parse_lines(out, asked) == {"3": ("n3", 3)}
