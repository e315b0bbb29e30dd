"""Everything the site adds to svc: the ``site`` transport, the ``site`` renderer, an MCP tool, a REST route and
``svc site``. Hook implementations only; heavy imports stay inside the functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_host.plugin import RendererSpec, ToolSpec, TransportSpec, hookimpl

if TYPE_CHECKING:
    import click
    from svc_host.plugin import JobDefinition, RenderedScript


@hookimpl
def svc_transports() -> list[TransportSpec]:
    from svc_example_site.settings import SiteSettings
    from svc_example_site.transport import SiteTransport

    settings = SiteSettings.from_env()
    if settings is None:
        return []
    return [
        TransportSpec(
            name="site",
            factory=lambda: SiteTransport(settings),
            description=f"Slurm on {settings.login}, account {settings.account}, QOS {settings.qos}",
            remote=True,
        )
    ]


def render_for_site(definition: JobDefinition) -> RenderedScript:
    """svc's default script with the site's account and QOS written into it (so it is charged right anywhere)."""
    from svc_host.plugin import render_sbatch

    from svc_example_site.settings import SiteSettings

    script = render_sbatch(definition)
    settings = SiteSettings.from_env()
    if settings is None:
        return script
    shebang, _, rest = script.text.partition("\n")
    lines = f"#SBATCH --account={settings.account}\n#SBATCH --qos={settings.qos}\n"
    return script.model_copy(update={"text": f"{shebang}\n{lines}{rest}"})


@hookimpl
def svc_renderers() -> list[RendererSpec]:
    return [RendererSpec(name="site", render=render_for_site, description="default script + site account/QOS")]


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

        from svc_example_site.settings import configured_account
        from svc_example_site.usage import account_usage, site_transport

        async def fetch() -> dict[str, Any]:
            account = configured_account()  # before any connection: an unconfigured site says what to set
            async with cli_host() as host:
                return await account_usage(account, site_transport(host))

        usage = asyncio.run(fetch())
        if as_json:
            print_json(usage)
            return
        print_table(
            ["account", "user", "raw shares", "raw usage", "fair share"], [list(r.values()) for r in usage["rows"]]
        )

    return [site]
