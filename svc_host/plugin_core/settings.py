"""Configuration only the plugins can check: the renderer a job uses, and each plugin's settings section.

``rendering.renderer`` (any config layer), a workflow's ``renderer`` and a job's ``renderer`` name one of the
renderers plugins register (``svc_renderers``); the most specific one wins. ``plugins.<name>`` is the section of
the plugin called ``<name>``, validated with the model it declares (``svc_settings``). Errors are
``ConfigError`` (REST 422, MCP ``{success: false}``, one CLI line) naming the renderers on offer, or the plugin
and the field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from svc_host.domain.validation_words import describe_validation
from svc_host.errors import ConfigError

if TYPE_CHECKING:
    from svc_host.domain.submission import JobDefinition, RenderedScript
    from svc_host.plugin_core.manager import PluginManager
    from svc_host.plugin_core.records import RendererSpec
    from svc_host.settings.config import SvcConfig

M = TypeVar("M", bound=BaseModel)


def renderer_named(plugins: PluginManager, name: str, *, where: str) -> RendererSpec:
    """The renderer ``name``; a ``ConfigError`` saying where the name came from and which renderers exist."""
    known = plugins.renderers()
    if name not in known:
        raise ConfigError(f"{where}: unknown renderer {name!r}; choose one of: {', '.join(sorted(known))}")
    return known[name]


def renderer_for(plugins: PluginManager, definition: JobDefinition, config: SvcConfig) -> RendererSpec:
    """The renderer of one job: its own ``renderer`` (set from the workflow's for workflow jobs), else the
    configuration's ``rendering.renderer``."""
    if definition.renderer is not None:
        return renderer_named(plugins, definition.renderer, where=f"job {definition.name!r}")
    return renderer_named(plugins, config.rendering.renderer, where="rendering.renderer")


def render_job(plugins: PluginManager, definition: JobDefinition, config: SvcConfig) -> RenderedScript:
    """``definition``'s batch script, by its renderer (``renderer_for``), under ``config``."""
    return renderer_for(plugins, definition, config).render_for(definition, config)


def plugin_settings(config: SvcConfig, name: str, model: type[M]) -> M:
    """The section ``plugins.<name>`` of ``config`` as ``model``, defaults where unset; a refused value is a
    ``ConfigError`` naming the field and, when ``config`` was read from its layers, the file or variable it
    came from."""
    try:
        return model.model_validate(config.plugins.get(name, {}))
    except ValidationError as exc:
        raise ConfigError(f"plugin {name!r} settings (plugins.{name}): {_problems(config, name, exc)}") from None


def _problems(config: SvcConfig, name: str, exc: ValidationError) -> str:
    """The model's complaints, each followed by where its field was set when that is known."""
    clauses = []
    for error in exc.errors():
        loc = error.get("loc", ())
        origin = config.plugin_setting_origin(name, str(loc[0])) if loc else None
        clause = describe_validation([error])
        clauses.append(f"{clause} (set in {origin})" if origin else clause)
    return "; ".join(clauses)


def _stored(config: SvcConfig, name: str) -> bool:
    """Whether every setting of section ``name`` was read from a layer (none comes from the change checked)."""
    section = config.plugins.get(name, {})
    return all(config.plugin_setting_origin(name, str(field)) is not None for field in section)


def check_config(plugins: PluginManager, config: SvcConfig) -> None:
    """Refuse a configuration naming an unknown renderer, a section no loaded plugin declares, or a setting a
    plugin's model refuses (``save_user_config``'s ``check``).

    A plugin section the change leaves as it was stored (``SvcConfig.plugin_setting_origin`` knows each of its
    settings) is not this change's to refuse: one plugin's bad section must not stop ``svc config set`` of an
    unrelated key. It is reported where it is used, and by ``svc plugins`` (``section_problems``)."""
    renderer_named(plugins, config.rendering.renderer, where="rendering.renderer")
    models = plugins.settings_models()
    for name in config.plugins:
        if _stored(config, name):
            continue
        if name not in models:
            known = ", ".join(sorted(models)) or "none"
            raise ConfigError(f"plugins.{name}: no loaded plugin {name!r} has settings; plugins with settings: {known}")
        plugin_settings(config, name, models[name])


def section_problems(plugins: PluginManager, config: SvcConfig) -> list[str]:
    """One sentence per plugin section of ``config`` its plugin refuses, naming the field and where it was set."""
    out: list[str] = []
    for name, model in sorted(plugins.settings_models().items()):
        try:
            plugin_settings(config, name, model)
        except ConfigError as exc:
            out.append(str(exc))
    return out


def shown(plugins: PluginManager, config: SvcConfig) -> dict[str, Any]:
    """``config`` as JSON with every declared plugin section complete (its model's defaults filled in); the
    sections of plugins not loaded now, and sections their plugin refuses, are shown as stored."""
    data = config.model_dump(mode="json")
    for name, model in sorted(plugins.settings_models().items()):
        try:
            data["plugins"][name] = plugin_settings(config, name, model).model_dump(mode="json")
        except ConfigError:
            continue  # shown as stored: its problem is reported where it is used (``section_problems``)
    return data
