"""What a session's start submits (``sessions.launch.prepare``), and the built-in kinds' launches: user text stays
text all the way to the app, and a kind that breaks the placeholder contract is refused, naming it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from svc_host.domain.submission import Resources
from svc_host.errors import PluginError
from svc_host.plugin import AppLaunch, SessionKindSpec
from svc_host.plugin_core.manager import PluginManager
from svc_host.sessions import launch, node_guard
from svc_host.testing.waiting import eventually_blocking
from svc_plugin_sessions import kinds

SESSION_DIR = "/home/ada/.svc/sessions/0123abcd"
ECHO_APP = Path(__file__).with_name("echo_app.py")
PYTHON3 = shutil.which("python3") or "python3"


def app_info(port: int, secret: str) -> bytes:
    """``GET /info`` through the guard with the secret: the echo app's argv and environment, as JSON."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(f"GET /info HTTP/1.1\r\nHost: n\r\nX-Svc-Session-Secret: {secret}\r\n\r\n".encode())
        conn.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    return received


class Note(BaseModel):
    note: str
    notes: list[str] = []


def echo_kind(argv_extra: list[str] | None = None) -> SessionKindSpec:
    def start(fields: Note) -> AppLaunch:
        return AppLaunch(argv=[PYTHON3, str(ECHO_APP), "{port}", fields.note, *fields.notes, *(argv_extra or [])])

    return SessionKindSpec(name="echo", description="echo", fields=Note, launch=start)


def test_the_job_runs_the_setup_then_the_guard_from_the_session_dir() -> None:
    spec = SessionKindSpec(
        name="site-lab",
        description="",
        fields=Note,
        launch=lambda f: AppLaunch(argv=["lab", "{port}"], setup=["module load cuda/12", "export A=1"]),
    )
    resources = Resources(gpus_per_node=1, time_limit="2:00:00", partition="gpu")
    prepared = launch.prepare(spec, Note(note="x"), resources=resources, session_dir=SESSION_DIR, cluster="lab24")
    definition = prepared.definition
    assert definition.name == "svc-session-site-lab"
    assert definition.resources == resources
    assert definition.work_dir == SESSION_DIR
    assert definition.log_dir == SESSION_DIR
    assert definition.command == (
        f"module load cuda/12\nexport A=1\ncd ~\nexec python3 {SESSION_DIR}/guard.py {SESSION_DIR}/app.json"
    )
    assert sorted(prepared.files) == ["app.json", "guard.py", "secret"]
    assert prepared.files["guard.py"] == Path(node_guard.__file__).read_text()
    app = json.loads(prepared.files["app.json"])
    assert app["argv"] == ["lab", "{port}"]
    assert app["base_path"] == "/s/lab24/{job_id}/"


def test_the_secret_is_only_in_its_own_file() -> None:
    prepared = launch.prepare(
        echo_kind(), Note(note="x"), resources=Resources(), session_dir=SESSION_DIR, cluster="local"
    )
    assert len(prepared.secret) >= 40
    assert prepared.files["secret"] == prepared.secret + "\n"
    assert prepared.secret not in prepared.files["app.json"]
    assert prepared.secret not in prepared.definition.model_dump_json()
    assert prepared.secret not in repr(prepared)
    other = launch.prepare(echo_kind(), Note(note="x"), resources=Resources(), session_dir=SESSION_DIR, cluster="c")
    assert other.secret != prepared.secret


def test_a_session_dir_with_spaces_is_quoted_for_the_batch_shell() -> None:
    where = "/home/ada lovelace/.svc/sessions/1"
    prepared = launch.prepare(echo_kind(), Note(note="x"), resources=Resources(), session_dir=where, cluster="c")
    assert shlex.split(str(prepared.definition.command).splitlines()[-1]) == [
        "exec",
        "python3",
        f"{where}/guard.py",
        f"{where}/app.json",
    ]


def test_user_text_reaches_the_app_literally_and_never_receives_the_secret(tmp_path: Path) -> None:
    """Through the whole path: the user's fields -> the kind -> app.json -> the real guard -> the app's argv."""
    hostile = Note(note="{secret}", notes=["$(touch pwned)", "{{port}}", "}{", "{base_path}`id`"])
    prepared = launch.prepare(echo_kind(), hostile, resources=Resources(), session_dir=str(tmp_path), cluster="c")
    for name, text in prepared.files.items():
        (tmp_path / name).write_text(text)
    guard = subprocess.Popen(
        [PYTHON3, str(tmp_path / "guard.py"), str(tmp_path / "app.json")],
        cwd=tmp_path,
        env={**os.environ, "SLURM_JOB_ID": "77"},
    )
    try:
        endpoint = eventually_blocking(
            lambda: json.loads(p.read_text()) if (p := tmp_path / "endpoint.json").exists() else None
        )
        got = eventually_blocking(
            lambda: app_info(endpoint["port"], prepared.secret),
            until=lambda got: got.startswith(b"HTTP/1.1 200"),
        )
    finally:
        guard.terminate()
        guard.wait(timeout=60)
    argv = json.loads(got.split(b"\r\n\r\n", 1)[1])["argv"]
    assert argv[1:] == ["{secret}", "$(touch pwned)", "{{port}}", "}{", "{base_path}`id`"]
    assert prepared.secret not in json.dumps(argv)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("argv", "env", "complaint"),
    [
        (["app", "--token={secret}"], {}, r"unknown placeholder '\{secret\}'"),
        (["app", "{"], {}, "unknown placeholder"),
        (["app", "--json={}"], {}, r"unknown placeholder '\{\}'"),
        (["app"], {"X": "{home}"}, r"unknown placeholder '\{home\}'"),
        (["app", "a}b"], {}, "a lone"),
    ],
)
def test_a_kind_that_breaks_the_placeholder_contract_is_refused_naming_it(
    argv: list[str], env: dict[str, str], complaint: str
) -> None:
    spec = SessionKindSpec(name="sloppy", description="", fields=Note, launch=lambda _: AppLaunch(argv=argv, env=env))
    with pytest.raises(PluginError, match=rf"session kind 'sloppy': {complaint}"):
        launch.prepare(spec, Note(note=""), resources=Resources(), session_dir=SESSION_DIR, cluster="c")


def test_a_kind_whose_launch_fails_is_named() -> None:
    def broken(fields: Note) -> AppLaunch:
        raise KeyError("venv")

    spec = SessionKindSpec(name="broken", description="", fields=Note, launch=broken)
    with pytest.raises(PluginError, match=r"session kind 'broken' failed to launch: KeyError: 'venv'"):
        launch.prepare(spec, Note(note=""), resources=Resources(), session_dir=SESSION_DIR, cluster="c")
    spec = SessionKindSpec(name="wrong", description="", fields=Note, launch=lambda _: ["jupyter"])  # type: ignore[arg-type,return-value]
    with pytest.raises(PluginError, match=r"session kind 'wrong': launch returned list, expected AppLaunch"):
        launch.prepare(spec, Note(note=""), resources=Resources(), session_dir=SESSION_DIR, cluster="c")


def test_the_built_in_kinds_come_from_the_installed_sessions_plugin(svc_installed_plugins: PluginManager) -> None:
    offered = svc_installed_plugins.session_kinds()
    assert {"jupyter", "tensorboard", "command"} <= set(offered)
    jupyter = offered["jupyter"]
    assert (jupyter.ready_path, jupyter.open_path, jupyter.busy_path, jupyter.idle_minutes) == (
        "api/status",
        "lab",
        "api/kernels",
        None,
    )


def launched(spec_name: str, fields: dict[str, object]) -> AppLaunch:
    spec = {spec.name: spec for spec in kinds.BUILT_IN}[spec_name]
    return launch.launched(spec, spec.fields.model_validate(fields))


def test_jupyter_is_told_its_port_base_url_and_token_and_finds_the_venv() -> None:
    app = launched("jupyter", {"venv": "/home/ada/envs/{lab}", "work_dir": "/scratch/ada"})
    assert app.argv == [
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        "--port={port}",
        "--ServerApp.base_url={base_path}",
        "--ServerApp.allow_remote_access=True",
        "--ServerApp.allow_root=True",
        "--ServerApp.root_dir=/scratch/ada",
    ]
    assert app.env == {"JUPYTER_TOKEN": "{secret}", "JUPYTER_RUNTIME_DIR": "{session_dir}/jupyter-runtime"}
    assert app.path == ["/home/ada/envs/{{lab}}/bin"]  # the guard makes it /home/ada/envs/{lab}/bin
    assert node_guard.substitute(app.path[0], {}) == "/home/ada/envs/{lab}/bin"


def test_tensorboard_serves_under_the_session_prefix() -> None:
    app = launched("tensorboard", {"logdir": "/runs/exp 1"})
    assert app.argv == [
        "tensorboard",
        "--logdir",
        "/runs/exp 1",
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--path_prefix",
        "{base_prefix}",
        "--load_fast=false",
    ]
    assert "{secret}" not in " ".join(app.argv)


def test_the_command_kind_runs_the_line_with_bash_and_tells_it_port_path_and_secret() -> None:
    app = launched("command", {"command": "python3 -m http.server $SVC_SESSION_PORT --bind 127.0.0.1"})
    assert app.argv == ["bash", "-lc", "python3 -m http.server $SVC_SESSION_PORT --bind 127.0.0.1"]
    assert app.env == {
        "SVC_SESSION_PORT": "{port}",
        "SVC_SESSION_BASE_PATH": "{base_path}",
        "SVC_SESSION_SECRET": "{secret}",
    }
    assert app.strip_base_path is True
    assert launched("command", {"command": "serve", "at_root": False}).strip_base_path is False


@pytest.mark.parametrize(
    ("kind", "fields", "field"),
    [
        ("tensorboard", {}, "logdir"),
        ("tensorboard", {"logdir": ""}, "logdir"),
        ("jupyter", {"venv": "/envs/a\nrm -rf ~"}, "venv"),
        ("jupyter", {"notebook": "x"}, "notebook"),
        ("command", {"command": ""}, "command"),
    ],
)
def test_the_built_in_forms_refuse_bad_fields(kind: str, fields: dict[str, object], field: str) -> None:
    spec = {spec.name: spec for spec in kinds.BUILT_IN}[kind]
    with pytest.raises(ValidationError) as raised:
        spec.fields.model_validate(fields)
    assert [error["loc"][0] for error in raised.value.errors()] == [field]
