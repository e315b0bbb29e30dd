"""``svc flow`` with templates past their limits (issue 26, N13): one line in words and exit 1, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

NESTED = "{{ " + "(" * 70 + "a" + ")" * 70 + " }}"
LONG_SUM = "{{ " + " + ".join(["1"] * 300) + " }}"


def svc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_host", "flow", *args], capture_output=True, text=True, timeout=180, check=False
    )


@pytest.mark.parametrize(
    ("template", "words"),
    [(NESTED, "nested more than 20 levels"), (LONG_SUM, "nests more than 50 levels")],
    ids=["70-parentheses", "300-term-sum"],
)
def test_validate_and_run_say_what_is_wrong_in_one_line(template: str, words: str) -> None:
    Path("deep.yaml").write_text(f"name: d\nargs: {{a: 1}}\njobs:\n  - name: a\n    command: {json.dumps(template)}\n")
    validated = svc("validate", "deep.yaml")
    assert validated.returncode == 1
    assert len(validated.stderr.splitlines()) == 1, validated.stderr
    assert validated.stderr.startswith("deep.yaml: line 5: jobs[0].command: template refused: ")
    assert words in validated.stderr
    ran = svc("run", "deep.yaml", "--dry-run")
    assert ran.returncode == 1
    assert len(ran.stderr.splitlines()) == 1, ran.stderr
    assert ran.stderr.startswith("error: line 5: jobs[0].command: template refused: ")
    assert words in ran.stderr
    assert "Traceback" not in validated.stderr + ran.stderr
