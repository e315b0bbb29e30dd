"""A click group whose subcommands are imported only when they are invoked or listed in --help.

Built-in commands are named in ``commands``; plugins add theirs through ``svc_cli_commands``. Plugins are
loaded only when a name is not built in or the whole list is wanted (``svc --help``), so ``svc --version``
and ``svc jobs`` never pay for them.
"""

from __future__ import annotations

import importlib
from typing import Any

import click


class LazyGroup(click.Group):
    """``commands`` maps a command name to ``"module:attribute"``."""

    def __init__(self, *args: Any, commands: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = commands or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands, *self._plugin_commands(quiet=True)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            module_name, attribute = self.lazy_commands[cmd_name].split(":")
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy_commands[cmd_name]} is not a click command")
            return command
        return super().get_command(ctx, cmd_name) or self._plugin_commands(quiet=False).get(cmd_name)

    def _plugin_commands(self, *, quiet: bool) -> dict[str, click.Command]:
        """Commands offered by plugins, minus any that would shadow a built-in (those are logged and ignored)."""
        import logging  # here, not at the top: a built-in command never pays for it

        from svc_host.errors import PluginError
        from svc_host.plugin_core.manager import get_plugin_manager

        try:
            offered = get_plugin_manager().cli_commands()
        except PluginError as exc:
            if not quiet:
                raise
            click.echo(f"warning: {exc}", err=True)
            return {}
        shadowing = sorted(name for name in offered if name in self.lazy_commands or name in self.commands)
        for name in shadowing:
            logging.getLogger(__name__).warning(
                "a plugin's CLI command %r is ignored: svc has a built-in command of that name", name
            )
        return {name: command for name, command in offered.items() if name not in shadowing}
