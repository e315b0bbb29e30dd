"""``svc plugins``: what is installed, what loaded, and what failed."""

from __future__ import annotations

import click

from svc_host.cli.options import json_option
from svc_host.cli.output import print_json, print_table


@click.command()
@json_option
def plugins(as_json: bool) -> None:
    """List plugins with their distribution, version, hooks and status, then what each says of its health."""
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.settings.paths import SvcPaths

    manager = get_plugin_manager()
    infos = manager.plugins()
    health = manager.health(SvcPaths.from_env())
    if as_json:
        print_json(
            [
                {**info.as_dict(), "health": health[info.name].as_dict() if info.name in health else None}
                for info in infos
            ]
        )
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
    for name, report in health.items():
        click.echo(f"{name}: {'ok' if report.ok else 'needs attention'}: {report.summary}")
