"""``svc plugins``: what is installed, what loaded, and what failed."""

from __future__ import annotations

import click

from svc_host.cli.output import json_option_help, print_json, print_table


@click.command()
@click.option("--json", "as_json", is_flag=True, help=json_option_help)
def plugins(as_json: bool) -> None:
    """List plugins with their distribution, version, hooks and status."""
    from svc_host.plugins import get_plugin_manager

    infos = get_plugin_manager().plugins()
    if as_json:
        print_json([info.as_dict() for info in infos])
        return
    print_table(
        ["name", "distribution", "version", "hooks", "status"],
        [
            [
                info.name,
                info.distribution,
                info.version,
                ", ".join(info.hooks),
                info.status + (f": {info.error}" if info.error else ""),
            ]
            for info in infos
        ],
    )
