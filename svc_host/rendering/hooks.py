"""Registers the host's ``default`` renderer; Jinja2 is imported only when a script is rendered."""

from __future__ import annotations

from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.records import RendererSpec


@hookimpl
def svc_renderers() -> list[RendererSpec]:
    from svc_host.rendering.sbatch import render_sbatch

    return [
        RendererSpec(
            name="default",
            render=render_sbatch,
            description="sbatch script from a sandboxed Jinja2 template (#SBATCH directives, env vars, "
            "conda/venv, apptainer); a user's own script keeps every #SBATCH option it sets",
        )
    ]
