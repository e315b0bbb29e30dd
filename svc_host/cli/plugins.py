"""``svc plugins``: what is installed, what loaded, and what failed."""

from __future__ import annotations

import os

import click

from svc_host.cli.options import json_option
from svc_host.cli.output import print_json, print_table
from svc_host.errors import ConfigError


@click.command()
@json_option
def plugins(as_json: bool) -> None:
    """List plugins with their distribution, version, hooks and status, then what each says of its health. A
    setting no installed plugin acts on (a chat webhook without the chat plugin) is a warning on stderr."""
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.settings.config import load_config
    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.warnings import config_warnings

    manager = get_plugin_manager()
    infos = manager.plugins()
    paths = SvcPaths.from_env()
    health = manager.health(paths)
    try:
        warnings = config_warnings(load_config(paths, env=os.environ), manager.delivered())
    except ConfigError as exc:  # the plugins are still worth listing; the configuration's own fix comes first
        warnings = [str(exc)]
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
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
