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
    """The section ``plugins.<name>`` of ``config`` as ``model``, defaults where unset."""
    try:
        return model.model_validate(config.plugins.get(name, {}))
    except ValidationError as exc:
        raise ConfigError(f"plugin {name!r} settings (plugins.{name}): {describe_validation(exc.errors())}") from None


def check_config(plugins: PluginManager, config: SvcConfig) -> None:
    """Refuse a configuration naming an unknown renderer, a section no loaded plugin declares, or a setting a
    plugin's model refuses (``save_user_config``'s ``check``)."""
    renderer_named(plugins, config.rendering.renderer, where="rendering.renderer")
    models = plugins.settings_models()
    for name in config.plugins:
        if name not in models:
            known = ", ".join(sorted(models)) or "none"
            raise ConfigError(f"plugins.{name}: no loaded plugin {name!r} has settings; plugins with settings: {known}")
        plugin_settings(config, name, models[name])


def shown(plugins: PluginManager, config: SvcConfig) -> dict[str, Any]:
    """``config`` as JSON with every declared plugin section complete (its model's defaults filled in); the
    sections of plugins not loaded now are shown as stored."""
    data = config.model_dump(mode="json")
    for name, model in sorted(plugins.settings_models().items()):
        data["plugins"][name] = plugin_settings(config, name, model).model_dump(mode="json")
    return data
