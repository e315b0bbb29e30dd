"""Layered configuration: system file -> user file -> project file -> ``SVC_*`` environment.

The project file (``.svc.json`` or ``svc.json`` of the working directory) is read only when the user trusts it
with its current content (``svc config trust``, see ``trust``); otherwise it is skipped with a one-line notice.
Settings that widen what svc may do (``plugins.<name>.allow_*``, such as the chat plugin's plain-http hosts)
are a user's decision and are refused in a project file even when it is trusted.

Each layer is a partial ``SvcConfig`` validated on its own, so a bad value is reported with the file (or
variable) and the field it is in. Later layers override single fields: a user file holding only
``{"resources": {"partition": "gpu"}}`` changes the partition and nothing else. ``environment.env_vars``
is merged per variable across layers; a write through ``save_user_config`` replaces the user file's
``env_vars`` as a whole so that a variable can be removed. Writes of the user file hold an exclusive
``flock`` on ``config.json.lock`` across their read-modify-write, so concurrent writers lose nothing.
Every read looks at the files, so running servers see changes made by other processes at once: the merged
configuration is kept while the files' ``stat`` signatures and the ``SVC_*`` variables are unchanged
(``file_memo``), so a read of unchanged files costs a ``stat`` per file, not a parse and a validation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict, SettingsError
from pydantic_settings.sources.utils import parse_env_vars

from svc_host.domain.profiles import check_exclude_patterns
from svc_host.domain.submission import Environment, Resources
from svc_host.domain.validation_words import describe_validation_error, field_problems
from svc_host.errors import ConfigError, ConflictError
from svc_host.settings import trust
from svc_host.settings.file_memo import FileMemo, signature
from svc_host.settings.files import (
    json_bytes,
    locked,
    parse_json_object,
    read_config_bytes,
    read_json_object,
    write_atomic,
    write_json_atomic,
)
from svc_host.settings.paths import PROJECT_CONFIG_CANDIDATES, PROJECT_CONFIG_NAME, SvcPaths
from svc_host.settings.secrets import keep_redacted

LayerSource = Literal["system", "user", "project", "env"]

ENV_PREFIX = "SVC_"
ENV_NESTED_DELIMITER = "__"

PROJECT_EXAMPLE: dict[str, Any] = {
    "resources": {
        "nodes": 1,
        "gpus_per_node": 1,
        "ntasks_per_node": 1,
        "cpus_per_task": 4,
        "memory_per_node": "16G",
        "time_limit": "01:00:00",
    },
    "environment": {"env_vars": {}},
    "log_dir": "logs",
}
"""What ``init_project_config`` writes: a starting point that validates and runs a one-GPU job for an hour."""


class Notifications(BaseModel):
    """Where status changes are announced."""

    model_config = ConfigDict(extra="forbid")

    chat_webhook_url: str | None = None


class Rendering(BaseModel):
    """How job scripts are written: ``renderer`` names one of the registered renderers (``svc plugins``)."""

    model_config = ConfigDict(extra="forbid")

    renderer: str = Field(default="default", pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class SvcConfig(BaseModel):
    """The configuration object of the specs (REST "SvcConfig", MCP "Configuration").

    ``rendering`` and ``plugins`` are svc's own additions: the renderer jobs use unless a job or workflow names
    one, and each plugin's settings section ``plugins.<name>``, checked against the model the plugin declares
    (``svc_settings``) by ``svc_host.plugin_core.settings``.
    """

    model_config = ConfigDict(extra="forbid")

    resources: Resources = Field(default_factory=Resources)
    environment: Environment = Field(default_factory=Environment)
    notifications: Notifications = Field(default_factory=Notifications)
    log_dir: str = Field(default="logs", min_length=1)
    work_dir: str | None = None
    rendering: Rendering = Field(default_factory=Rendering)
    plugins: dict[str, dict[str, Any]] = Field(default_factory=dict)
    _origins: dict[str, str] = PrivateAttr(default_factory=dict)

    def plugin_setting_origin(self, plugin: str, field: str) -> str | None:
        """Where ``plugins.<plugin>.<field>`` was set (``user config /home/me/.config/svc/config.json``,
        ``environment variable SVC_PLUGINS__CHAT__FORMAT``), so that a value its plugin refuses is reported with
        its file and layer; ``None`` for a value of a configuration not read from its layers (a change being
        made)."""
        return self._origins.get(f"{plugin}.{field}")


PROJECT_SYNC_KEY = "exclude"
"""The one key a project file holds beyond ``SvcConfig``: rsync patterns a sync of the mount whose local root
holds the file never uploads nor deletes (``{"exclude": ["data/", "*.ckpt"]}``)."""


@dataclass(frozen=True)
class ConfigLayer:
    """One partial configuration and where it came from (a file path, or ``environment``); ``ignored`` says why
    a present file adds nothing (an untrusted project file)."""

    source: LayerSource
    origin: str
    data: dict[str, Any]
    ignored: str | None = None


# -- reading -------------------------------------------------------------------------------------------


def merge_layer(
    base: Mapping[str, Any], over: Mapping[str, Any], *, model: type[BaseModel] = SvcConfig
) -> dict[str, Any]:
    """``over`` laid on ``base``: nested models merge field by field, dict fields merge key by key."""
    merged = dict(base)
    for key, value in over.items():
        field = model.model_fields.get(key)
        annotation = field.annotation if field is not None else None
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                merged[key] = merge_layer(merged[key], value, model=annotation)
                continue
            merged[key] = _merge_dicts(merged[key], value)
            continue
        merged[key] = value
    return merged


def _merge_dicts(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Dict fields merge key by key, nested dicts too (``plugins.chat`` of two layers merge field by field)."""
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        both = isinstance(value, Mapping) and isinstance(old, Mapping)
        merged[key] = _merge_dicts(old, value) if both else value  # type: ignore[arg-type]
    return merged


def validate_layer(data: Mapping[str, Any], *, where: str = "") -> SvcConfig:
    """Check a partial configuration on its own (laid over the defaults); errors name ``where`` and the field."""
    try:
        return SvcConfig.model_validate(merge_layer(_defaults(), data))
    except ValidationError as exc:
        problems = field_problems(exc.errors())
        raise ConfigError(describe_validation_error(exc, where=where), fields=problems) from None


def normalize_layer(data: Mapping[str, Any], *, where: str = "") -> dict[str, Any]:
    """The keys of ``data`` with validated values (``"4"`` becomes ``4``), ready to be written to a file."""
    return _pick(validate_layer(data, where=where).model_dump(mode="json"), data, SvcConfig)


def _pick(validated: Mapping[str, Any], keys: Mapping[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    picked: dict[str, Any] = {}
    for key, value in keys.items():
        annotation = model.model_fields[key].annotation
        if isinstance(value, Mapping) and isinstance(annotation, type) and issubclass(annotation, BaseModel):
            picked[key] = _pick(validated[key], value, annotation)
        else:
            picked[key] = validated[key]
    return picked


def project_excludes(data: Mapping[str, Any], *, where: str) -> list[str]:
    """The validated ``exclude`` list of a project file's content (``[]`` when absent)."""
    value = data.get(PROJECT_SYNC_KEY, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: exclude: must be a list of rsync patterns (strings)")
    try:
        return check_exclude_patterns(value)
    except ValueError as exc:  # said under the Settings editor's exclude field too
        raise ConfigError(f"{where}: exclude: {exc}", fields=[{"field": "exclude", "message": str(exc)}]) from None


def project_layer(data: Mapping[str, Any], *, where: str) -> dict[str, Any]:
    """A project file's configuration fields, its ``exclude`` checked and set aside (it is not a job default).

    ``plugins.<name>.allow_*`` settings are refused: what svc may reach is the user's decision, not a project's.
    """
    project_excludes(data, where=where)
    plugins = data.get("plugins")
    for name, section in plugins.items() if isinstance(plugins, Mapping) else []:
        for field in section if isinstance(section, Mapping) else []:
            if str(field).startswith("allow_"):
                raise ConfigError(
                    f"{where}: plugins.{name}.{field} may not be set in a project config; set it in the user "
                    f"config (svc config set plugins.{name}.{field} ...)"
                )
    return {key: value for key, value in data.items() if key != PROJECT_SYNC_KEY}


def project_config_file(directory: Path) -> Path:
    """The project config file of ``directory``: the first candidate that exists, else ``.svc.json``."""
    for name in PROJECT_CONFIG_CANDIDATES:
        if (directory / name).is_file():
            return directory / name
    return directory / PROJECT_CONFIG_NAME


def env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    """The configuration fields set by ``SVC_*`` variables (``SVC_RESOURCES__PARTITION=gpu``, ``SVC_LOG_DIR=out``).

    Variables that are not configuration fields (``SVC_SSH_*``, ``SVC_DATABASE_URL``...) are ignored; empty
    values count as unset.
    """
    try:
        data = _MappingEnvSource(env)()
    except SettingsError as exc:
        # pydantic-settings wraps any failure; only a value that does not parse is the environment's
        if exc.__cause__ is not None and not isinstance(exc.__cause__, ValueError):
            raise exc.__cause__ from None
        raise ConfigError(f"environment: {exc}; dict values such as SVC_ENVIRONMENT__ENV_VARS take JSON") from None
    plugins = data.get("plugins")
    for name, section in plugins.items() if isinstance(plugins, dict) else []:
        for field, value in section.items() if isinstance(section, dict) else []:
            section[field] = _plugin_env_value(name, field, value)
    return data


def _plugin_env_value(plugin: str, field: str, value: Any) -> Any:
    """A plugin setting from ``SVC_PLUGINS__<NAME>__<FIELD>``: a list or an object is written as JSON
    (``SVC_PLUGINS__CHAT__ALLOW_HTTP_HOSTS='["hooks.lan"]'``); anything else is the text itself, which the
    plugin's model converts (``"5"`` for a number). Only text starting with ``[`` or ``{`` is parsed, so a
    string setting never changes type by looking like a number."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("[", "{"):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        variable = _env_variable(plugin, field)
        raise ConfigError(
            f"environment variable {variable}: not valid JSON ({exc}); lists and objects take JSON"
        ) from None


def _env_variable(plugin: str, field: str) -> str:
    return ENV_PREFIX + ENV_NESTED_DELIMITER.join(("plugins", plugin, field)).upper()


def config_layers(paths: SvcPaths, *, env: Mapping[str, str] | None) -> list[ConfigLayer]:
    """Every layer present, lowest precedence first, each already validated on its own."""
    layers: list[ConfigLayer] = []
    files: list[tuple[LayerSource, Path]] = [("system", paths.system_config), ("user", paths.user_config)]
    for source, path in files:
        data = read_json_object(path)
        if data is not None:
            validate_layer(data, where=str(path))
            layers.append(ConfigLayer(source, str(path), data))
    project = _project_layer(paths)
    if project is not None:
        layers.append(project)
    if env is not None:
        data = env_layer(env)
        if data:
            try:
                SvcConfig.model_validate(merge_layer(_defaults(), data))
            except ValidationError as exc:
                raise ConfigError(_describe_env_error(exc)) from None
            layers.append(ConfigLayer("env", "environment", data))
    return layers


def _project_layer(paths: SvcPaths) -> ConfigLayer | None:
    """The working directory's project file as a layer: its content when trusted, else an ignored layer (also when
    it cannot be read as a config file: a cloned repository decides what it is, and must not stop a command)."""
    path = project_config_file(paths.project_dir)
    try:
        raw = read_config_bytes(path)
    except ConfigError as exc:  # a FIFO, a directory, /dev/zero, over 1 MiB: no content was ever trusted as that
        return ConfigLayer("project", str(path), {}, ignored=trust.announce_unreadable(path, str(exc)))
    if raw is None:
        return None
    if not trust.is_trusted(paths, path, raw):
        return ConfigLayer("project", str(path), {}, ignored=trust.announce_ignored(path, raw))
    data = project_layer(parse_json_object(path, raw), where=str(path))
    validate_layer(data, where=str(path))
    return ConfigLayer("project", str(path), data)


def trust_project(paths: SvcPaths, directory: Path) -> Path:
    """Trust the project file of ``directory`` with its current content (checked first); the file trusted."""
    path = project_config_file(directory)
    raw = read_config_bytes(path)
    if raw is None:
        raise ConfigError(f"{directory} has no project config ({' or '.join(PROJECT_CONFIG_CANDIDATES)})")
    validate_layer(project_layer(parse_json_object(path, raw), where=str(path)), where=str(path))
    trust.record(paths, path, raw)
    return path


def untrust_project(paths: SvcPaths, directory: Path) -> list[str]:
    """Stop trusting the project files of ``directory``; the files that were trusted."""
    return trust.forget(paths, directory, PROJECT_CONFIG_CANDIDATES)


_LOADED: FileMemo[SvcConfig] = FileMemo()


def load_config(paths: SvcPaths, *, env: Mapping[str, str] | None) -> SvcConfig:
    """The effective configuration; ``env=None`` ignores ``SVC_*`` variables (the MCP server does).

    Each call returns a configuration of its own (a copy of the one kept while nothing it came from changed)."""
    files = (
        paths.system_config,
        paths.user_config,
        *(paths.project_dir / name for name in PROJECT_CONFIG_CANDIDATES),
        trust.store_file(paths),  # a project file counts only while trusted with its content
    )
    signatures = tuple(signature(path) for path in files)
    key = (files, signatures, None if env is None else _prefixed(env))
    config = _LOADED.get(key)
    if config is None:
        config = _load_config(paths, env=env)
        _LOADED.put(key, config, signatures)
    return config.model_copy(deep=True)


def _prefixed(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables ``env_layer`` may read (``SVC_*`` in any case), sorted: part of the kept value's key."""
    return tuple(sorted((name, env[name]) for name in list(env) if name[:4].upper() == ENV_PREFIX))


def _load_config(paths: SvcPaths, *, env: Mapping[str, str] | None) -> SvcConfig:
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for layer in config_layers(paths, env=env):
        merged = merge_layer(merged, layer.data)
        origins.update(_plugin_origins(layer.data, layer_name(layer)))
    return _with_origins(validate_layer(merged, where="merged configuration"), origins)


def _with_origins(config: SvcConfig, origins: Mapping[str, str]) -> SvcConfig:
    """``config``, knowing where its plugin settings came from (``SvcConfig.plugin_setting_origin``)."""
    config._origins = dict(origins)
    return config


def layer_name(layer: ConfigLayer) -> str:
    """How a layer is named in a message: ``user config /path/config.json`` or ``environment``."""
    return "environment" if layer.source == "env" else f"{layer.source} config {layer.origin}"


def _plugin_origins(data: Mapping[str, Any], where: str) -> dict[str, str]:
    """``<plugin>.<field>`` -> where, for every plugin setting ``data`` (one layer) holds."""
    plugins = data.get("plugins")
    out: dict[str, str] = {}
    for name, section in plugins.items() if isinstance(plugins, Mapping) else []:
        for field in section if isinstance(section, Mapping) else []:
            out[f"{name}.{field}"] = (
                f"environment variable {_env_variable(name, field)}" if where == "environment" else where
            )
    return out


def config_paths(paths: SvcPaths) -> list[dict[str, Any]]:
    """The files that can hold configuration, lowest precedence first: ``{path, exists, source}``."""
    entries: list[tuple[str, Path]] = [("system", paths.system_config), ("user", paths.user_config)]
    entries += [("project", paths.project_dir / name) for name in PROJECT_CONFIG_CANDIDATES]
    return [{"path": str(path), "exists": path.is_file(), "source": source} for source, path in entries]


# -- writing -------------------------------------------------------------------------------------------


def read_user_config(paths: SvcPaths) -> dict[str, Any]:
    """The user file's own (partial) content, validated; ``{}`` when there is none."""
    data = read_json_object(paths.user_config) or {}
    validate_layer(data, where=str(paths.user_config))
    return data


def save_user_config(
    paths: SvcPaths,
    partial: Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]],
    *,
    env: Mapping[str, str] | None = None,
    check: Callable[[SvcConfig], None] | None = None,
) -> SvcConfig:
    """Lay ``partial`` over the user file, validate, write it atomically (0600); return the effective config.

    ``partial`` may be a function of the file's current content, called under the writers' lock, for a change
    that depends on what is stored (one variable of ``env_vars``). A value that fails validation names the
    field of ``partial``; nothing is written then. ``check`` sees the new user file first and may refuse it
    (``plugin_config.check_config``: renderer and plugin settings). A secret sent back as ``<redacted>`` (as
    GET showed it) keeps the stored value.
    """
    with locked(paths.user_config):  # another process's write in between would otherwise be lost
        current = read_json_object(paths.user_config) or {}
        if callable(partial):
            partial = partial(current)
        partial = normalize_layer(keep_redacted(partial, current))
        updated = merge_layer(current, partial)
        environment = partial.get("environment")
        if isinstance(environment, Mapping) and "env_vars" in environment:
            updated["environment"] = {**updated["environment"], "env_vars": dict(environment["env_vars"])}
        validated = validate_layer(updated, where=str(paths.user_config))
        if check is not None:  # what the file already held (and this change leaves) is named as stored
            stored = _plugin_origins(current, f"user config {paths.user_config}")
            changed = _plugin_origins(partial, "")
            check(_with_origins(validated, {key: where for key, where in stored.items() if key not in changed}))
        write_json_atomic(paths.user_config, updated)
    return load_config(paths, env=env)


def reset_user_config(paths: SvcPaths) -> SvcConfig:
    """Overwrite the user file with a complete default configuration and return it (what the file now holds).

    The fresh file sets every field, so values from the system file no longer show through; project files
    and ``SVC_*`` variables still win over it.
    """
    defaults = SvcConfig()
    with locked(paths.user_config):
        write_json_atomic(paths.user_config, defaults.model_dump(mode="json"))
    return defaults


@dataclass(frozen=True)
class ProjectConfig:
    """The project config file of one directory and its (partial) content."""

    path: Path
    exists: bool
    config: dict[str, Any]


def read_project_config(directory: Path) -> ProjectConfig:
    """The project configuration of ``directory`` as stored (partial); ``{}`` when there is no file."""
    path = project_config_file(directory)
    data = read_json_object(path)
    if data is not None:
        validate_layer(project_layer(data, where=str(path)), where=str(path))
    return ProjectConfig(path=path, exists=data is not None, config=data or {})


def write_project_config(
    directory: Path,
    config: Mapping[str, Any],
    *,
    check: Callable[[SvcConfig], None] | None = None,
    trusted_by: SvcPaths | None = None,
) -> ProjectConfig:
    """Replace the project configuration of ``directory`` with ``config`` (partial allowed), atomically.

    ``check`` may refuse it, as in ``save_user_config``. A secret sent back as ``<redacted>`` keeps the value of
    the file being replaced. With ``trusted_by`` the written content is trusted for that user (they wrote it)."""
    path = project_config_file(directory)
    try:
        stored = read_json_object(path) or {}
    except ConfigError:
        stored = {}  # a broken file is being replaced; it has nothing to keep
    normalized = normalize_layer(keep_redacted(project_layer(config, where=str(path)), stored))
    if check is not None:
        check(validate_layer(normalized, where=str(path)))
    if PROJECT_SYNC_KEY in config:
        normalized[PROJECT_SYNC_KEY] = list(config[PROJECT_SYNC_KEY])
    _require_directory(directory)
    _write_project_file(path, normalized, trusted_by)
    return ProjectConfig(path=path, exists=True, config=normalized)


def init_project_config(directory: Path, *, trusted_by: SvcPaths | None = None) -> ProjectConfig:
    """Create ``.svc.json`` with example values; ``ConflictError`` if a project config file already exists."""
    _require_directory(directory)
    for name in PROJECT_CONFIG_CANDIDATES:
        if (directory / name).exists():
            raise ConflictError(f"project config {directory / name} already exists; edit it instead")
    path = directory / PROJECT_CONFIG_NAME
    _write_project_file(path, PROJECT_EXAMPLE, trusted_by)
    return ProjectConfig(path=path, exists=True, config=json.loads(json.dumps(PROJECT_EXAMPLE)))


# -- helpers -------------------------------------------------------------------------------------------


def _defaults() -> dict[str, Any]:
    return SvcConfig().model_dump(mode="json")


def _write_project_file(path: Path, value: Mapping[str, Any], trusted_by: SvcPaths | None) -> None:
    data = json_bytes(value)
    write_atomic(path, data)
    if trusted_by is not None:
        trust.record(trusted_by, path, data)


def _require_directory(directory: Path) -> None:
    if not directory.is_dir():
        raise ConfigError(f"project directory {directory} does not exist; create it or fix the mount's local path")


def _describe_env_error(exc: ValidationError) -> str:
    clauses = []
    for error in exc.errors():
        loc = [str(part) for part in error.get("loc", ())]
        name = ENV_PREFIX + ENV_NESTED_DELIMITER.join(loc).upper() if loc else "SVC_*"
        clauses.append(f"environment variable {name}: {error['msg']}")
    return "; ".join(clauses)


class _EnvSettings(BaseSettings, SvcConfig):
    """The fields of ``SvcConfig`` as pydantic-settings sees them (only used to read variables)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_NESTED_DELIMITER, env_ignore_empty=True, extra="forbid"
    )


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source reading a given mapping instead of ``os.environ``."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._mapping = env
        super().__init__(_EnvSettings)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._mapping, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)
