"""The layout of ``render_sbatch``'s text is promised (docs/plugins/api.md): line 1 the shebang, then svc's
``#SBATCH`` lines, then (for a ``command``) one blank line and the body; a user ``script`` keeps its own lines after
them. A renderer that wraps it adds its ``#SBATCH`` lines right after the first line and relies on this."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from svc_host.plugin import JobDefinition, render_sbatch

API_MD = Path(__file__).resolve().parents[3] / "docs" / "plugins" / "api.md"

COMMANDS: list[dict[str, Any]] = [
    {"command": "echo hi"},
    {"command": ["python", "train.py", "--lr", "0.1"]},
    {"command": "echo hi", "environment": {"env_vars": {"A": "1"}, "venv": "/opt/venv"}},
    {"command": "echo hi", "environment": {"conda": "ml"}},
    {"command": "run", "environment": {"container": "img.sif"}},
    {"command": "echo hi", "resources": {"partition": "gpu", "gpus_per_node": 2, "time_limit": "01:00:00"}},
]
SCRIPTS = [
    "#!/bin/bash\n#SBATCH --time=5\necho hi\n",
    "echo no shebang\n",
    "#!/bin/sh\n#SBATCH -p gpu\n\n# a comment\necho x\n",
]


def directive_block(lines: list[str]) -> int:
    """Where svc's ``#SBATCH`` lines after the shebang end."""
    end = 1
    while end < len(lines) and lines[end].startswith("#SBATCH --"):
        end += 1
    return end


@pytest.mark.parametrize("fields", COMMANDS)
def test_a_command_is_shebang_directives_blank_line_body(fields: dict[str, Any]) -> None:
    lines = render_sbatch(JobDefinition(**fields)).text.splitlines()
    assert lines[0] == "#!/bin/bash"
    end = directive_block(lines)
    assert end > 1
    assert lines[end] == ""
    assert lines[end + 1] != ""
    assert not any(line.startswith("#SBATCH") for line in lines[end:])  # the block is all of svc's directives


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_script_keeps_its_lines_after_svcs_directives(script: str) -> None:
    lines = render_sbatch(JobDefinition(script=script)).text.splitlines()
    own = script.splitlines()
    kept = own[1:] if own[0].startswith("#!") else own
    assert lines[0] == (own[0] if own[0].startswith("#!") else "#!/bin/bash")
    svcs = lines[1 : len(lines) - len(kept)]
    assert svcs
    assert all(line.startswith("#SBATCH --") for line in svcs)
    assert lines[len(lines) - len(kept) :] == kept


def test_api_md_promises_the_layout() -> None:
    row = next(line for line in API_MD.read_text().splitlines() if line.startswith("| `render_sbatch` |"))
    for words in ("line 1 is the shebang", "`#SBATCH` lines", "one blank line", "right after the first line"):
        assert words in row
