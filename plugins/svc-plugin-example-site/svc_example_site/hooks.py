"""Everything the site adds to svc: its settings, the ``site`` transport, the ``site`` renderer, an MCP tool, a REST
route, ``svc site`` and the ``site-jupyter`` session kind. Hook implementations only; heavy imports stay inside the
functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_host.plugin import RendererSpec, SessionKindSpec, ToolSpec, TransportSpec, hookimpl

if TYPE_CHECKING:
    import click
    from pydantic import BaseModel
    from svc_host.plugin import JobDefinition, PluginHost, RenderedScript, SlurmTransport, SvcConfig

SVC_PLUGIN_API = ">=1.1,<2"
"""The plugin API versions this plugin is written against: svc refuses to load it outside them, saying so."""


@hookimpl
def svc_settings() -> type[BaseModel]:
    from svc_example_site.settings import SiteSettings

    return SiteSettings


def make_transport(*, host: PluginHost) -> SlurmTransport:
    """The ``site`` transport of ``host``, reading the host's ``plugins.site`` at every command; refused, saying
    what to set, while the site is not configured."""
    from svc_example_site.settings import NAME, SiteSettings
    from svc_example_site.transport import SiteTransport

    def settings() -> SiteSettings:
        return host.plugin_settings(NAME, SiteSettings)

    settings().require()
    return SiteTransport(settings)


@hookimpl
def svc_transports() -> list[TransportSpec]:
    description = "Slurm on the site's login node (plugins.site), every job on its account and QOS"
    return [TransportSpec(name="site", factory=make_transport, description=description, remote=True)]


def render_for_site(definition: JobDefinition, *, config: SvcConfig) -> RenderedScript:
    """svc's default script with the site's account and QOS written into it (so it is charged right anywhere),
    from ``plugins.site`` of the configuration of the process that renders."""
    from svc_host.plugin import plugin_settings, render_sbatch

    from svc_example_site.settings import NAME, SiteSettings

    settings = plugin_settings(config, NAME, SiteSettings)
    lines = f"#SBATCH --account={settings.charged_account}\n#SBATCH --qos={settings.qos}\n"
    script = render_sbatch(definition)
    shebang, _, rest = script.text.partition("\n")
    return script.model_copy(update={"text": f"{shebang}\n{lines}{rest}"})


@hookimpl
def svc_renderers() -> list[RendererSpec]:
    return [RendererSpec(name="site", render=render_for_site, description="default script + site account/QOS")]


@hookimpl
def svc_session_kinds() -> list[SessionKindSpec]:
    from svc_example_site.sessions import SITE_JUPYTER

    return [SITE_JUPYTER]


@hookimpl
def svc_mcp_tools() -> list[ToolSpec]:
    from svc_example_site.mcp_tools import TOOLS

    return TOOLS


@hookimpl
def svc_api_routers() -> list[Any]:
    from svc_example_site.routes import router

    return [router]


@hookimpl
def svc_cli_commands() -> list[click.Command]:
    import click

    @click.command()
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    def site(as_json: bool) -> None:
        """The site account's fair-share standing (sshare on the login node)."""
        import asyncio

        from svc_host.plugin import cli_host, print_json, print_table

        from svc_example_site.usage import site_usage

        async def fetch() -> dict[str, Any]:
            async with cli_host() as host:
                return await site_usage(host)

        usage = asyncio.run(fetch())
        if as_json:
            print_json(usage)
            return
        print_table(
            ["account", "user", "raw shares", "raw usage", "fair share"], [list(r.values()) for r in usage["rows"]]
        )

    return [site]
