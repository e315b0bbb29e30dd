"""The site's ``site-jupyter`` session kind, found through the entry point as svc finds it: JupyterLab after the
site's ``module load``, its token from the session's secret, the user's directory kept as text."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from svc_host.plugin import PluginError

from svc_example_site.sessions import MODULES, SiteJupyterFields


def test_svc_session_kinds_offers_site_jupyter_beside_the_built_ins(svc_installed_plugins: Any) -> None:
    offered = svc_installed_plugins.session_kinds()
    assert {"site-jupyter", "jupyter", "tensorboard", "command"} <= set(offered)
    kind = offered["site-jupyter"]
    assert (kind.ready_path, kind.open_path, kind.busy_path, kind.idle_minutes) == (
        "api/status",
        "lab",
        "api/kernels",
        120,
    )


def test_the_site_modules_are_loaded_before_jupyterlab(svc_installed_plugins: Any) -> None:
    kind = svc_installed_plugins.session_kind("site-jupyter")
    app = kind.launch(SiteJupyterFields(work_dir="/scratch/ada"))
    assert app.setup == [f"if type module >/dev/null 2>&1; then module load {MODULES}; fi"]
    assert app.argv[:2] == ["jupyter", "lab"]
    assert "--port={port}" in app.argv
    assert "--ServerApp.base_url={base_path}" in app.argv
    assert app.argv[-1] == "--ServerApp.root_dir=/scratch/ada"
    # the secret in the environment, never on the command line; Jupyter's runtime files in the session's dir
    assert app.env == {"JUPYTER_TOKEN": "{secret}", "JUPYTER_RUNTIME_DIR": "{session_dir}/jupyter-runtime"}
    assert not any("{secret}" in word for word in app.argv)


def test_the_form_refuses_what_is_not_a_directory_line() -> None:
    with pytest.raises(ValidationError, match="work_dir"):
        SiteJupyterFields(work_dir="/scratch\nrm -rf ~")
    with pytest.raises(ValidationError, match="modules"):
        SiteJupyterFields.model_validate({"modules": "anything"})


def test_an_unknown_kind_names_the_site_one_among_the_choices(svc_installed_plugins: Any) -> None:
    with pytest.raises(PluginError, match=r"site-jupyter \(from site \(svc-plugin-example-site"):
        svc_installed_plugins.session_kind("site-lab")
