"""``svc plugins``: what is installed, what loaded, what each plugin offers, and what failed.

Every collect hook is called once (as a server's start would), so a plugin whose hook raises or returns something
other than its records shows as ``failed`` with the reason, not ``ok`` until the first real use.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import click

from svc_host.cli.options import json_option
from svc_host.cli.output import print_json, print_table
from svc_host.errors import SvcError

if TYPE_CHECKING:
    from svc_host.plugin_core.manager import PluginManager

T = TypeVar("T")


@click.command()
@json_option
def plugins(as_json: bool) -> None:
    """List plugins with their distribution, version, hooks, status and pieces (transports, renderers, routes,
    MCP tools, session kinds, CLI commands, settings...), then what each says of its health. A setting no
    installed plugin acts on (a chat webhook without the chat plugin), a plugin settings section its plugin
    refuses and duplicate names are warnings on stderr."""
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.settings.paths import SvcPaths

    manager = get_plugin_manager()
    pieces, warnings = _run_apart(_exercise(manager))
    health = manager.health(SvcPaths.from_env())
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    infos = manager.plugins()  # after the calls: a hook that failed has marked its plugin
    if as_json:
        print_json(
            [
                {
                    **info.as_dict(),
                    "pieces": pieces.get(info.name, {}),
                    "health": health[info.name].as_dict() if info.name in health else None,
                }
                for info in infos
            ]
        )
        return
    print_table(
        ["name", "distribution", "version", "pieces", "status"],
        [
            [
                info.name,
                info.distribution,
                info.version,
                _pieces_text(pieces.get(info.name, {})) or ", ".join(info.hooks),
                info.status + (f": {info.error}" if info.error else ""),
            ]
            for info in infos
        ],
    )
    for name, report in health.items():
        click.echo(f"{name}: {'ok' if report.ok else 'needs attention'}: {report.summary}")


def _run_apart(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)``, in a thread of its own when this thread already runs an event loop (the command
    invoked from an application or a test that runs one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


async def _exercise(manager: PluginManager) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """Every plugin's pieces (each collect hook called once, with this shell's host) and the warnings: settings no
    plugin acts on, plugin sections their plugin refuses, duplicate names, a configuration that cannot be read."""
    from svc_host.domain.profiles import HostConfig
    from svc_host.host import Host
    from svc_host.plugin_core.settings import section_problems
    from svc_host.settings.config import load_config
    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.warnings import config_warnings

    warnings: list[str] = []
    paths = SvcPaths.from_env()
    try:
        config = load_config(paths, env=os.environ)
    except SvcError as exc:  # the plugins are still worth listing; the configuration's own fix comes first
        warnings.append(str(exc))
    else:
        warnings += config_warnings(config, manager.delivered())
        warnings += section_problems(manager, config)
    try:
        host = Host.create("cli", paths=paths, plugins=manager)
        host_config = host.transports.config
    except SvcError as exc:  # a broken profiles file: listed without the profiles' transports and the host
        warnings.append(str(exc))
        pieces = manager.pieces(HostConfig(), None)
        return pieces, warnings + duplicates(pieces)
    try:
        pieces = manager.pieces(host_config, host)
    finally:
        await host.close()
    return pieces, warnings + duplicates(pieces)


UNIQUE = ("transports", "sync_backends", "renderers", "mcp_tools", "session_kinds", "cli_commands")
"""The kinds of pieces whose names must be unique across plugins (a server refuses to start otherwise)."""


def duplicates(pieces: dict[str, dict[str, list[str]]]) -> list[str]:
    """One sentence per name of a ``UNIQUE`` kind that more than one plugin offers, naming them all."""
    out = []
    for kind in UNIQUE:
        offered: dict[str, list[str]] = {}
        for plugin, kinds in pieces.items():
            for name in kinds.get(kind, []):
                offered.setdefault(name, []).append(plugin)
        out += [
            f"{kind.replace('_', ' ')} {name!r} is offered by {' and '.join(plugins)}: a server will not start; "
            "disable one with SVC_DISABLE_PLUGINS"
            for name, plugins in sorted(offered.items())
            if len(plugins) > 1
        ]
    return out


SHOWN_PER_KIND = 6
"""Names of one kind a table cell shows (svc's own REST routes are about a hundred; ``--json`` lists all)."""


def _pieces_text(pieces: dict[str, list[str]]) -> str:
    """``transports: local; renderers: default``: one cell of the table."""
    return "; ".join(f"{kind.replace('_', ' ')}: {_names_text(names)}" for kind, names in pieces.items())


def _names_text(names: list[str]) -> str:
    if len(names) <= SHOWN_PER_KIND:
        return ", ".join(names)
    return f"{', '.join(names[:SHOWN_PER_KIND])} and {len(names) - SHOWN_PER_KIND} more (--json lists them)"
