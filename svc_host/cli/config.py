"""``svc config show|set|paths|reset|trust|untrust``: the layered configuration (system -> user -> project ->
SVC_* env); a project file is used only once trusted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from svc_host.settings.paths import SvcPaths

JSON_HELP = "Print JSON instead of a table (for scripts)."


class InputError(click.ClickException):
    """A bad argument: one line on stderr and exit 2, like a usage error but without the usage text."""

    exit_code = 2


def _paths() -> SvcPaths:
    from svc_host.settings.paths import SvcPaths

    return SvcPaths.from_env()


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"resources": {"nodes": 1}}`` -> ``[("resources.nodes", 1)]``; dict leaves such as env_vars stay whole,
    except plugin sections: ``plugins.chat.format``."""
    from pydantic import BaseModel

    from svc_host.settings.config import SvcConfig

    rows: list[tuple[str, Any]] = []
    sections = {
        name
        for name, field in SvcConfig.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
    }
    for key, value in data.items():
        if not prefix and key in sections and isinstance(value, dict):
            rows += _flatten(value, f"{key}.")
        elif not prefix and key == "plugins" and isinstance(value, dict):
            rows += [
                (f"plugins.{name}.{field}", setting)
                for name, section in value.items()
                for field, setting in (section.items() if isinstance(section, dict) else [])
            ]
        else:
            rows.append((prefix + key, value))
    return rows


def _lookup(data: dict[str, Any], key: str) -> Any:
    value: Any = data
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def config_keys() -> list[str]:
    """Every key ``svc config set`` accepts (``environment.env_vars.NAME`` sets one variable), the loaded plugins'
    settings (``plugins.<name>.<field>``) included."""
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.settings.config import SvcConfig

    keys = [key for key, _ in _flatten(SvcConfig().model_dump(mode="json")) if key != "plugins"]
    models = get_plugin_manager().settings_models()
    return keys + [f"plugins.{name}.{field}" for name, model in sorted(models.items()) for field in model.model_fields]


def partial_for(key: str, value: str, user_env_vars: dict[str, str]) -> dict[str, Any]:
    """The partial configuration that sets ``key`` to ``value`` (``null`` clears an optional value).

    ``environment.env_vars`` takes a JSON object; ``environment.env_vars.NAME VALUE`` sets one variable
    of the user file's ``env_vars``.
    """
    import json

    keys = config_keys()
    head, _, name = key.partition("environment.env_vars.")
    if not head and name:
        if "." in name:
            raise InputError(f"environment variable names may not contain '.': {name!r}")
        env_vars = dict(user_env_vars)
        if value == "null":
            env_vars.pop(name, None)
        else:
            env_vars[name] = value
        return {"environment": {"env_vars": env_vars}}
    if key not in keys:
        raise InputError(f"unknown configuration key {key!r}; choose one of: {', '.join(keys)}")
    parsed: Any = None if value == "null" else value
    if key.startswith("plugins."):  # plugin settings take JSON where it parses (5, true, ["a"]), else the text
        _, name, field = key.split(".", 2)
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        if parsed is not None and not isinstance(parsed, str) and takes_text(plugin_field(name, field)):
            parsed = value  # a text field given digits (a numeric account) or true is that text
        return {"plugins": {name: {field: parsed}}}
    if key == "environment.env_vars":
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise InputError(f'{key} takes a JSON object such as \'{{"HF_HOME": "/data/hf"}}\'') from None
    section, _, field = key.rpartition(".")
    return {section: {field: parsed}} if section else {field: parsed}


def plugin_field(plugin: str, field: str) -> Any:
    """The type plugin ``plugin``'s settings model declares for ``field`` (``config_keys`` listed it)."""
    from svc_host.plugin_core.manager import get_plugin_manager

    return get_plugin_manager().settings_models()[plugin].model_fields[field].annotation


def takes_text(annotation: Any) -> bool:
    """Whether a field of this type takes text (``str``, ``str | None``, a ``Literal`` of texts): its value is set
    as typed, not read as JSON first, where ``1234`` would be a number the field refuses."""
    import types
    import typing

    if annotation is str:
        return True
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return all(isinstance(argument, str) for argument in arguments)
    return origin in (typing.Union, types.UnionType) and any(takes_text(argument) for argument in arguments)


@click.group()
def config() -> None:
    """Show and change the configuration (system -> user -> project file -> SVC_* variables)."""


@config.command()
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def show(as_json: bool) -> None:
    """Show the merged configuration as this shell sees it (environment variable values and the webhook
    URL shown as <redacted>: they are in the files)."""
    import os

    from svc_host.cli.output import print_json, print_table
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.plugin_core.settings import shown
    from svc_host.settings.config import load_config
    from svc_host.settings.secrets import mask_config

    merged = mask_config(shown(get_plugin_manager(), load_config(_paths(), env=os.environ)))
    if as_json:
        print_json(merged)
        return
    rows = [[key, "null" if value is None else json_text(value)] for key, value in _flatten(merged)]
    print_table(["key", "value"], rows)


def json_text(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)


@config.command("set")
@click.argument("key")
@click.argument("value")
def set_value(key: str, value: str) -> None:
    """Set KEY (e.g. resources.partition) to VALUE in the user config file; 'null' clears a value."""
    import functools
    import os

    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.plugin_core.settings import check_config, shown
    from svc_host.settings.config import read_user_config, save_user_config, validate_layer
    from svc_host.settings.secrets import REDACTED

    def partial(current: dict[str, Any]) -> dict[str, Any]:  # read under the lock: a concurrent set is kept
        return partial_for(key, value, current.get("environment", {}).get("env_vars", {}))

    paths = _paths()
    plugins = get_plugin_manager()
    check = functools.partial(check_config, plugins)
    merged = shown(plugins, save_user_config(paths, partial, env=os.environ, check=check))
    secret = key.startswith("environment.env_vars") or key == "notifications.chat_webhook_url"
    click.echo(f"{key} = {REDACTED if secret else value} (saved to {paths.user_config})")
    if key == "environment.env_vars":
        return
    saved = shown(plugins, validate_layer(read_user_config(paths)))
    if _lookup(merged, key) != _lookup(saved, key):
        click.echo(
            f"note: the project config or an SVC_* variable overrides {key}; in effect: {_lookup(merged, key)!r}",
            err=True,
        )


@config.command()
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def paths(as_json: bool) -> None:
    """List the configuration files, lowest precedence first, and whether each exists."""
    from svc_host.cli.output import print_json, print_table
    from svc_host.settings.config import config_paths

    entries = config_paths(_paths())
    if as_json:
        print_json(entries)
        return
    print_table(
        ["source", "path", "exists"], [[e["source"], e["path"], "yes" if e["exists"] else "no"] for e in entries]
    )


@config.command()
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def reset(yes: bool) -> None:
    """Overwrite the user config file with the default configuration."""
    from svc_host.settings.config import reset_user_config

    paths = _paths()
    if not yes:
        click.confirm(f"Overwrite {paths.user_config} with the defaults?", abort=True)
    reset_user_config(paths)
    click.echo(f"reset {paths.user_config} to the default configuration")


@config.command("trust")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=str))
def trust_directory(directory: str | None) -> None:
    """Use the project config (.svc.json or svc.json) of DIRECTORY (default: here) as it is now.

    Read it first: it sets defaults of every job started from there. Once it changes, it is ignored again
    until it is trusted again."""
    from pathlib import Path

    from svc_host.settings.config import trust_project

    trusted = trust_project(_paths(), Path(directory or ".").absolute())
    click.echo(f"trusted {trusted} as it is now; run 'svc config trust' again after it changes")


@config.command("untrust")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=str))
def untrust_directory(directory: str | None) -> None:
    """Stop using the project config of DIRECTORY (default: here)."""
    from pathlib import Path

    from svc_host.settings.config import untrust_project

    where = Path(directory or ".").absolute()
    removed = untrust_project(_paths(), where)
    click.echo(f"no longer trusted: {', '.join(removed)}" if removed else f"nothing in {where} was trusted")
