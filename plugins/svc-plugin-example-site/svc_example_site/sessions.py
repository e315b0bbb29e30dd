"""The site's own session kind: JupyterLab after the site's module environment is loaded, as a site whose
Python and CUDA come from environment modules needs (``module load`` runs in the job before the app)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from svc_host.plugin import AppLaunch, SessionKindSpec

MODULES = "python/3.11 cuda/12.4"
"""The site's modules JupyterLab runs with: the site's own text, never a user's (setup lines are shell)."""


class SiteJupyterFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    work_dir: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        pattern=r"^[^\x00-\x1f\x7f]*$",
        description="the directory JupyterLab opens (default: the home directory)",
    )


def site_jupyter(fields: SiteJupyterFields) -> AppLaunch:
    argv = [
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        "--port={port}",
        "--ServerApp.base_url={base_path}",
        "--ServerApp.allow_remote_access=True",
    ]
    if fields.work_dir:
        argv.append(f"--ServerApp.root_dir={fields.work_dir}")
    # where the node has no module system (the dev cluster), the job's own PATH is used
    setup = [f"if type module >/dev/null 2>&1; then module load {MODULES}; fi"]
    return AppLaunch(
        argv=argv,
        env={"JUPYTER_TOKEN": "{secret}", "JUPYTER_RUNTIME_DIR": "{session_dir}/jupyter-runtime"},
        setup=setup,
    )


SITE_JUPYTER = SessionKindSpec(
    name="site-jupyter",
    description=f"JupyterLab with the site's modules ({MODULES})",
    fields=SiteJupyterFields,
    launch=site_jupyter,
    ready_path="api/status",
    open_path="lab",
    busy_path="api/kernels",
    proxy_headers={"Authorization": "token {secret}"},  # Jupyter's own check of JUPYTER_TOKEN
    idle_minutes=120,
)
