"""A click group whose subcommands are imported only when they are invoked or listed in --help."""

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
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            module_name, attribute = self.lazy_commands[cmd_name].split(":")
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy_commands[cmd_name]} is not a click command")
            return command
        return super().get_command(ctx, cmd_name)
