"""The svc agent's request validation and where it lives: what the agent refuses (each with one clear
message), which setups share an agent, and which directories it refuses to use."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from svc_host.agent import protocol
from svc_host.agent.place import Place, fingerprint, runtime_dir
from svc_host.errors import ConfigError
from svc_host.settings.paths import SvcPaths


def line(**body: object) -> bytes:
    request: dict[str, object] = {"svc": "0.1.0", "fingerprint": "f" * 64, "call": "queue", "args": {}, "cwd": "/work"}
    request.update(body)
    return json.dumps(request).encode()


def test_a_valid_request_round_trips() -> None:
    sent = protocol.Request("0.1.0", "ab" * 32, "status", {"transport": "hpc", "job_ids": ["42", "43_1"]}, "/w")
    assert protocol.parse_request(protocol.request_line(sent)) == sent


def test_a_session_start_request_round_trips_and_is_never_run_twice() -> None:
    args = {"transport": "hpc", "kind": "jupyter", "fields": {"venv": "/opt/v"}, "gpus": "1", "time_limit": None}
    sent = protocol.Request("0.1.0", "ab" * 32, "session_start", {**args, "partition": None}, "/w")
    assert protocol.parse_request(protocol.request_line(sent)) == sent
    assert protocol.SIDE_EFFECTS["session_start"] == ("svc session start", "svc session list")


def test_a_session_open_request_round_trips() -> None:
    args = {"transport": "hpc", "job_id": "42", "wait": True}
    sent = protocol.Request("0.1.0", "ab" * 32, "session_open", args, "/w")
    assert protocol.parse_request(protocol.request_line(sent)) == sent
    assert "session_open" not in protocol.SIDE_EFFECTS  # a CLI that lost the agent may serve the session itself


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"not json", "a request is one JSON object on one line"),
        (b"[1, 2]", "a request is one JSON object on one line"),
        (
            line(call="frobnicate"),
            "unknown call 'frobnicate'; choose one of: queue, status, submit, log_step, session_start, session_open, "
            "ping",
        ),
        (line(call=7), "request field 'call' must be a string"),
        (line(args=[]), "call 'queue': 'args' must be an object"),
        (line(args={"transport": "hpc"}), "call 'queue' needs argument 'user' (a string or null)"),
        (line(args={"transport": "hpc", "user": None, "all": True}), "call 'queue' takes no argument 'all'"),
        (line(args={"transport": 1, "user": None}), "call 'queue': argument 'transport' must be a string"),
        (
            line(call="status", args={"transport": "hpc", "job_ids": "42"}),
            "argument 'job_ids' must be a list of strings",
        ),
        (
            line(
                call="log_step",
                args={"transport": "hpc", "job_id": "42", "which": "/etc/passwd", "offset": 0, "follow": False},
            ),
            "argument 'which' must be 'stdout' or 'stderr'",
        ),
        (
            line(
                call="log_step",
                args={"transport": "hpc", "job_id": "42", "which": "stdout", "offset": True, "follow": False},
            ),
            "argument 'offset' must be a non-negative integer",
        ),
        (
            line(
                call="submit",
                args={
                    "transport": "hpc",
                    "fields": {"nodes": [1]},
                    "command": ["true"],
                    "script": None,
                    "env": {},
                    "mount": None,
                },
            ),
            "argument 'fields' must be an object of strings, integers or nulls",
        ),
        (line(args={"transport": "hpc", "user": None}, cwd="relative"), "'cwd' must be an absolute path"),
        (line(call="session_open", args={"transport": "hpc"}), "call 'session_open' needs argument 'job_id'"),
        (
            line(call="session_open", args={"transport": "hpc", "job_id": 42, "wait": True}),
            "call 'session_open': argument 'job_id' must be a string",
        ),
        (
            line(call="session_open", args={"transport": "hpc", "job_id": "42", "wait": "yes"}),
            "call 'session_open': argument 'wait' must be true or false",
        ),
        (
            line(call="session_open", args={"transport": "hpc", "job_id": "42", "wait": True, "port": 8888}),
            "call 'session_open' takes no argument 'port'",
        ),
    ],
)
def test_a_bad_request_is_refused_with_what_is_wrong(raw: bytes, message: str) -> None:
    with pytest.raises(protocol.BadRequest) as refused:
        protocol.parse_request(raw)
    assert message in str(refused.value)


def test_a_reply_must_be_one_known_key() -> None:
    assert protocol.parse_reply(b'{"result": [1]}\n') == {"result": [1]}
    for bad in (b'{"result": 1, "ready": true}', b'{"hello": 1}', b"[]"):
        with pytest.raises(ValueError, match="not an svc agent reply"):
            protocol.parse_reply(bad)


def paths(root: Path) -> SvcPaths:
    return SvcPaths(root / "etc.json", root / "config", root / "state", root)


def test_the_setup_decides_the_agent_but_svc_agent_variables_do_not(tmp_path: Path) -> None:
    base = fingerprint(paths(tmp_path), {"HOME": "/h"})
    assert fingerprint(paths(tmp_path), {"HOME": "/other", "SVC_AGENT": "auto"}) == base
    assert fingerprint(paths(tmp_path), {"SVC_DATABASE_URL": "postgresql://db/svc"}) != base
    assert fingerprint(paths(tmp_path), {"SVC_SSH_HOSTNAME": "login"}) != base
    assert fingerprint(paths(tmp_path / "other"), {}) != base


def test_sockets_go_to_the_runtime_dir_else_a_tmp_dir_of_this_user() -> None:
    assert runtime_dir({"XDG_RUNTIME_DIR": "/run/user/7"}) == Path("/run/user/7/svc")
    assert runtime_dir({"TMPDIR": "/scratch"}) == Path(f"/scratch/svc-{os.getuid()}")
    place = Place(runtime_dir({}), "0123456789abcdef" * 4, Path("/x/agent.log"))
    assert len(str(place.socket).encode()) < 108  # a Unix socket path's limit


def test_the_directory_is_made_private(tmp_path: Path) -> None:
    place = Place(tmp_path / "svc", "a" * 64, tmp_path / "agent.log")
    place.secure_dir(create=True)
    assert (place.directory.stat().st_mode & 0o777) == 0o700


def test_a_directory_others_can_enter_is_refused(tmp_path: Path) -> None:
    place = Place(tmp_path / "svc", "a" * 64, tmp_path / "agent.log")
    place.directory.mkdir(mode=0o755)
    place.directory.chmod(0o755)
    with pytest.raises(ConfigError, match=r"is open to other users \(mode 755\); `chmod 700"):
        place.secure_dir(create=True)


def test_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    place = Place(tmp_path / "svc", "a" * 64, tmp_path / "agent.log")
    place.directory.symlink_to(real)
    with pytest.raises(ConfigError, match="is not a directory"):
        place.secure_dir(create=True)


def test_another_users_directory_is_refused(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a directory away needs root")  # make test runs as root
    place = Place(tmp_path / "svc", "a" * 64, tmp_path / "agent.log")
    place.directory.mkdir(mode=0o700)
    os.chown(place.directory, 12345, 12345)
    with pytest.raises(ConfigError, match="belongs to uid 12345, not to you"):
        place.secure_dir(create=False)
