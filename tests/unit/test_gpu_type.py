"""``submit`` with a GPU type: ``gpu_type`` in the resources (REST, MCP, workflows), ``-G a100:2`` or
``--gpu-type`` in the CLI; the script asks ``--gres=gpu:a100:2``."""

from __future__ import annotations

import click
import pytest
from pydantic import ValidationError

from svc_host.cli.jobs import gpu_count
from svc_host.domain.submission import JobDefinition, Resources
from svc_host.rendering.sbatch import render_sbatch


@pytest.mark.parametrize(
    ("kind", "gres"), [(None, "gpu:2"), ("a100", "gpu:a100:2"), ("a100_3g.20gb", "gpu:a100_3g.20gb:2")]
)
def test_the_script_asks_for_the_type(kind: str | None, gres: str) -> None:
    resources = Resources(gpus_per_node=2, gpu_type=kind)
    script = render_sbatch(JobDefinition(name="typed", command="nvidia-smi", resources=resources)).text
    assert f"#SBATCH --gres={gres}\n" in script


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"gpu_type": "a100"}, "gpu_type 'a100' needs gpus_per_node of 1 or more"),
        ({"gpu_type": "a100 --wrap=x", "gpus_per_node": 1}, "a GPU type as the cluster names it"),
        ({"gpu_type": "a100\n#SBATCH -A x", "gpus_per_node": 1}, "a GPU type as the cluster names it"),
    ],
)
def test_a_bad_gpu_type_is_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Resources.model_validate(fields)


def test_dash_g_takes_a_count_or_a_type_and_a_count() -> None:
    assert gpu_count("2") == (None, 2)
    assert gpu_count("a100:2") == ("a100", 2)
    assert gpu_count("a100_3g.20gb:7") == ("a100_3g.20gb", 7)
    for bad in ("a100", ":2", "a100:x", ""):
        with pytest.raises(click.UsageError, match="expects N or TYPE:N"):
            gpu_count(bad)
