"""``svc_host.plugin_core.settings``: the renderer a job uses, plugin settings sections, and what refuses a config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import BaseModel, ConfigDict, Field

from svc_host import hookimpl
from svc_host.domain.submission import JobDefinition
from svc_host.errors import ConfigError
from svc_host.host import Host
from svc_host.plugin_core.manager import PluginManager
from svc_host.plugin_core.records import RendererSpec
from svc_host.plugin_core.settings import check_config, plugin_settings, renderer_for, shown
from svc_host.rendering.sbatch import render_sbatch
from svc_host.settings.config import SvcConfig, load_config, save_user_config
from svc_host.settings.paths import SvcPaths
from svc_host.workflows.prepare import RunRequest, prepare


class SiteSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    qos: str = "normal"
    max_gpus: int = Field(default=4, ge=1)


@pytest.fixture
def plugins(svc_plugin_manager: PluginManager, svc_register_plugin: Callable[..., None]) -> PluginManager:
    renderers = [RendererSpec(name="site", render=render_sbatch)]
    site = SimpleNamespace(svc_renderers=hookimpl(lambda: renderers), svc_settings=hookimpl(lambda: SiteSettings))
    svc_register_plugin(site, "mysite")
    return svc_plugin_manager


def config(**data: object) -> SvcConfig:
    return SvcConfig.model_validate(data)


def test_a_job_renderer_wins_over_the_configured_one(plugins: PluginManager) -> None:
    configured = config(rendering={"renderer": "site"})
    assert renderer_for(plugins, JobDefinition(command="true"), configured).name == "site"
    assert renderer_for(plugins, JobDefinition(command="true", renderer="default"), configured).name == "default"
    assert renderer_for(plugins, JobDefinition(command="true"), SvcConfig()).name == "default"


def test_an_unknown_renderer_names_where_it_came_from_and_the_known_ones(plugins: PluginManager) -> None:
    with pytest.raises(ConfigError, match=r"^job 'x': unknown renderer 'nope'; choose one of: default, site$"):
        renderer_for(plugins, JobDefinition(name="x", command="true", renderer="nope"), SvcConfig())
    with pytest.raises(ConfigError, match=r"^rendering.renderer: unknown renderer 'gone'; choose one of: default"):
        check_config(plugins, config(rendering={"renderer": "gone"}))


def test_plugin_settings_have_defaults_and_errors_name_the_plugin_and_the_field(plugins: PluginManager) -> None:
    assert plugin_settings(SvcConfig(), "mysite", SiteSettings) == SiteSettings()
    assert shown(plugins, SvcConfig())["plugins"] == {"mysite": {"qos": "normal", "max_gpus": 4}}
    with pytest.raises(ConfigError) as caught:
        check_config(plugins, config(plugins={"mysite": {"max_gpus": 0}}))
    assert str(caught.value) == (
        "plugin 'mysite' settings (plugins.mysite): max_gpus: Input should be greater than or equal to 1"
    )
    with pytest.raises(ConfigError, match=r"^plugins.other: no loaded plugin 'other' has settings; .*: mysite$"):
        check_config(plugins, config(plugins={"other": {"a": 1}}))


def test_sections_merge_field_by_field_across_layers_and_a_refused_change_writes_nothing(
    plugins: PluginManager, svc_paths: SvcPaths
) -> None:
    svc_paths.system_config.parent.mkdir(parents=True)
    svc_paths.system_config.write_text('{"plugins": {"mysite": {"qos": "high", "max_gpus": 2}}}')
    check = lambda candidate: check_config(plugins, candidate)  # noqa: E731
    save_user_config(svc_paths, {"plugins": {"mysite": {"max_gpus": 8}}}, check=check)
    merged = load_config(svc_paths, env={"SVC_PLUGINS__MYSITE__QOS": "low"})
    assert plugin_settings(merged, "mysite", SiteSettings) == SiteSettings(qos="low", max_gpus=8)
    stored = svc_paths.user_config.read_text()
    with pytest.raises(ConfigError, match=r"plugins\.mysite"):
        save_user_config(svc_paths, {"plugins": {"mysite": {"max_gpus": -1}}}, check=check)
    assert svc_paths.user_config.read_text() == stored


def test_a_workflow_renderer_applies_to_its_jobs_unless_a_job_names_its_own(
    plugins: PluginManager, svc_test_host: Host, tmp_path: Path
) -> None:
    import svc_plugin_local.hooks

    plugins.register(svc_plugin_local.hooks, "local")
    text = (
        "name: chosen\nrenderer: site\njobs:\n  - {name: a, command: 'true'}\n"
        "  - {name: b, command: 'true', renderer: default}\n"
    )
    run = prepare(svc_test_host, RunRequest(yaml_path=tmp_path / "wf.yaml", text=text))
    assert [job.definition.renderer for job in run.new_run.jobs] == ["site", "default"]
    with pytest.raises(ConfigError, match=r"^job 'a': unknown renderer 'nope'; choose one of: default, site$"):
        prepare(svc_test_host, RunRequest(yaml_path=tmp_path / "wf.yaml", text=text.replace("site", "nope")))
