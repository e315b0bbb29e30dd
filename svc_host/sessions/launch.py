"""What a session's start submits: the files of its directory on the cluster and the job that runs its app.

Pure: ``prepare`` is given the kind, its checked fields, the resources and the session's directory, and returns
the files to write there (``secret``, ``app.json``, ``guard.py``; every one written private, 0600) and the
``JobDefinition`` that goes through the one submit service. Its batch script runs the kind's setup lines, then
``exec python3 <dir>/guard.py <dir>/app.json``: the node guard (``node_guard.py``, shipped as text) starts the app
and lets in only requests that carry the secret.

User text never becomes a placeholder: the kind's ``launch`` is given the fields with every brace of user text
doubled, and a launch whose text is not of the form the guard reads (``node_guard.substitute``) is refused
before anything is written.
"""

from __future__ import annotations

import json
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from svc_host.domain.submission import JobDefinition, Resources
from svc_host.errors import PluginError
from svc_host.plugin_core.records import AppLaunch
from svc_host.sessions.node_guard import substitute

if TYPE_CHECKING:
    from svc_host.plugin_core.records import SessionKindSpec

GUARD_FILE = "guard.py"
APP_FILE = "app.json"
SECRET_FILE = "secret"  # noqa: S105 - the name of the file, not a secret
SECRET_BYTES = 32
"""A session's secret: 32 random bytes, URL-safe text (what Jupyter takes as its token)."""


@dataclass(frozen=True)
class PreparedSession:
    """A session ready to submit: ``files`` by name in the session directory (text, written 0600), the job, and
    the secret svc keeps to reach the app (never shown to a user, never logged)."""

    definition: JobDefinition
    files: dict[str, str]
    secret: str

    def __repr__(self) -> str:
        return f"PreparedSession(definition={self.definition!r}, files={sorted(self.files)})"


def guard_source() -> str:
    """The node guard's source, as it is copied into every session's directory."""
    return Path(__file__).with_name("node_guard.py").read_text()


def base_path_template(cluster: str) -> str:
    """The URL path the session is served under, ``{job_id}`` left for the guard (the job has no id yet)."""
    return f"/s/{cluster}/{{job_id}}/"


def escaped(value: Any) -> Any:
    """``value`` with every brace of its user text doubled, through models, lists and mappings (a model is rebuilt
    without validation: its values were checked already, and a validator need not know about braces)."""
    if type(value) is str:  # an enum member that is a str is the kind's own word, not user text
        return value.replace("{", "{{").replace("}", "}}")
    if isinstance(value, PurePath):
        return type(value)(escaped(str(value)))
    if isinstance(value, BaseModel):
        fields = {name: escaped(getattr(value, name)) for name in type(value).model_fields}
        return type(value).model_construct(_fields_set=value.model_fields_set, **fields)
    if isinstance(value, dict):
        return {escaped(key): escaped(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(escaped(item) for item in value)
    return value


def launched(spec: SessionKindSpec, fields: BaseModel) -> AppLaunch:
    """The kind's ``AppLaunch`` for ``fields`` (user text escaped), checked to be text the guard reads; a kind
    that breaks the contract is a ``PluginError`` naming it, the request is not at fault."""
    try:
        app = spec.launch(escaped(fields))
    except Exception as exc:
        raise PluginError(f"session kind {spec.name!r} failed to launch: {type(exc).__name__}: {exc}") from exc
    if not isinstance(app, AppLaunch):
        raise PluginError(f"session kind {spec.name!r}: launch returned {type(app).__name__}, expected AppLaunch")
    plain = {"port": "1", "base_path": "/", "base_prefix": "", "session_dir": "/"}
    try:
        for text in [*app.argv, *app.path]:
            substitute(text, plain)
        for text in app.env.values():
            substitute(text, {**plain, "secret": "s"})
    except ValueError as exc:
        raise PluginError(
            f"session kind {spec.name!r}: {exc}; placeholders are {{port}}, {{base_path}}, {{base_prefix}}, "
            "{session_dir} and, in env values only, {secret}; a literal brace is written twice"
        ) from exc
    return app


def prepare(
    spec: SessionKindSpec, fields: BaseModel, *, resources: Resources, session_dir: str, cluster: str
) -> PreparedSession:
    """The files and the job of one session of ``spec`` in ``session_dir`` (an absolute cluster path) on
    ``cluster`` (the transport's name, part of the session's URL path)."""
    app = launched(spec, fields)
    secret = secrets.token_urlsafe(SECRET_BYTES)
    app_json = {
        "argv": list(app.argv),
        "env": dict(app.env),
        "path": list(app.path),
        "strip_base_path": app.strip_base_path,
        "base_path": base_path_template(cluster),
        "secret_file": SECRET_FILE,
    }
    where = session_dir.rstrip("/")
    run_guard = f"exec python3 {shlex.quote(f'{where}/{GUARD_FILE}')} {shlex.quote(f'{where}/{APP_FILE}')}"
    definition = JobDefinition(
        name=f"svc-session-{spec.name}",
        # the app starts in the home directory, as a job that names none, never among the session's files (its secret)
        command="\n".join([*app.setup, "cd ~", run_guard]),
        resources=resources,
        work_dir=where,
        log_dir=where,
    )
    files = {SECRET_FILE: secret + "\n", APP_FILE: json.dumps(app_json, indent=1) + "\n", GUARD_FILE: guard_source()}
    return PreparedSession(definition=definition, files=files, secret=secret)
