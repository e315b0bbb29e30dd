"""The built-in session kinds: their forms (pydantic models) and how each starts its app on the node.

Every ``launch`` inserts field values as they are (svc has doubled their braces, so a value never becomes a
placeholder) and puts the secret only in the environment: any user of the node can read a command line.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from svc_host.plugin import AppLaunch, SessionKindSpec

ONE_LINE = r"^[^\x00-\x1f\x7f]*$"
"""A path on one line, without control characters."""


class PythonEnvironment(BaseModel):
    """A form field shared by the Python apps: the environment whose ``bin/`` has the app."""

    model_config = ConfigDict(extra="forbid")

    venv: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        pattern=ONE_LINE,
        description="a Python environment whose bin/ has the app (a venv or conda prefix); empty: the job's PATH",
    )

    def bin_path(self) -> list[str]:
        return [f"{self.venv.rstrip('/')}/bin"] if self.venv else []


class JupyterFields(PythonEnvironment):
    work_dir: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        pattern=ONE_LINE,
        description="the directory JupyterLab opens (default: the home directory)",
    )


def jupyter(fields: JupyterFields) -> AppLaunch:
    argv = [
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        "--port={port}",
        "--ServerApp.base_url={base_path}",
        "--ServerApp.allow_remote_access=True",
        "--ServerApp.allow_root=True",  # a job may run as root (a container, a dev machine): the guard protects it
    ]
    if fields.work_dir:
        argv.append(f"--ServerApp.root_dir={fields.work_dir}")
    # Jupyter writes its token into its runtime files (jpserver-*.json, *-open.html): kept in the 0700 session dir
    env = {"JUPYTER_TOKEN": "{secret}", "JUPYTER_RUNTIME_DIR": "{session_dir}/jupyter-runtime"}
    return AppLaunch(argv=argv, env=env, path=fields.bin_path())


class TensorBoardFields(PythonEnvironment):
    logdir: str = Field(
        min_length=1, max_length=4096, pattern=ONE_LINE, description="the log directory TensorBoard reads"
    )


def tensorboard(fields: TensorBoardFields) -> AppLaunch:
    argv = ["tensorboard", "--logdir", fields.logdir, "--host", "127.0.0.1", "--port", "{port}"]
    # --load_fast=false: the fast loader opens a second data-server port of its own, behind no secret
    argv += ["--path_prefix", "{base_prefix}", "--load_fast=false"]
    return AppLaunch(argv=argv, path=fields.bin_path())


class CommandFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(
        min_length=1,
        max_length=100_000,
        description="a shell command line that serves HTTP on 127.0.0.1:$SVC_SESSION_PORT (run with bash -lc)",
    )
    at_root: bool = Field(
        default=True,
        description="the app serves at / (svc cuts the session's path from each request); "
        "off: it serves under $SVC_SESSION_BASE_PATH",
    )

    @field_validator("command")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        if "\0" in value:
            raise ValueError("the command may not contain a NUL byte")
        return value


def command(fields: CommandFields) -> AppLaunch:
    """The user's own command line, with the trust of a submitted job's command: bash runs it, as sbatch would."""
    env = {
        "SVC_SESSION_PORT": "{port}",
        "SVC_SESSION_BASE_PATH": "{base_path}",
        "SVC_SESSION_SECRET": "{secret}",
    }
    return AppLaunch(argv=["bash", "-lc", fields.command], env=env, strip_base_path=fields.at_root)


BUILT_IN = [
    SessionKindSpec(
        name="jupyter",
        description="JupyterLab",
        fields=JupyterFields,
        launch=jupyter,
        ready_path="api/status",
        open_path="lab",
        busy_path="api/kernels",
        proxy_headers={"Authorization": "token {secret}"},  # Jupyter's own check of JUPYTER_TOKEN
    ),
    SessionKindSpec(
        name="tensorboard",
        description="TensorBoard on a log directory",
        fields=TensorBoardFields,
        launch=tensorboard,
    ),
    SessionKindSpec(
        name="command",
        description="A command of your own that serves HTTP on $SVC_SESSION_PORT",
        fields=CommandFields,
        launch=command,
    ),
]
