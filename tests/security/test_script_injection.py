"""Job names and env values with shell metacharacters and newlines never leave their place in the batch
script: the directive block sbatch reads is exactly svc's directives (the name one word of ``--job-name``),
and bash running the script sets the env var to exactly the value and runs nothing else."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from svc_host.domain.submission import Environment, JobDefinition
from svc_host.rendering.sbatch import render_sbatch, sbatch_words

OURS = ["--job-name", "--output", "--error", "--nodes", "--ntasks-per-node", "--cpus-per-task"]
names = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=200)
values = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=80)


def directive_block(script: str) -> list[list[str]]:
    """The ``#SBATCH`` lines sbatch reads: those before the first line that is neither blank nor a comment."""
    found = []
    for line in script.split("\n")[1:]:
        if line.startswith("#SBATCH"):
            found.append(sbatch_words(line[len("#SBATCH") :]))
        elif line.strip() and not line.lstrip().startswith("#"):
            break
    return found


@given(name=names, value=values)
@example(name='x" --wrap="touch /tmp/pwned', value="a'; touch /tmp/pwned; echo '")
@example(name="a #SBATCH --time=1", value="\n#SBATCH --wrap=touch\n$(touch pwned)`touch pwned`")
@example(name="het\\job packjob 'q' \\", value="\\\n\r\t")
@settings(max_examples=60, deadline=None)
def test_names_and_env_values_stay_in_place(name: str, value: str) -> None:
    definition = JobDefinition(
        name=name, command=["printenv", "SVC_PROBE"], environment=Environment(env_vars={"SVC_PROBE": value})
    )
    script = render_sbatch(definition).text
    block = directive_block(script)
    assert [words[0].partition("=")[0] for words in block] == OURS
    assert all(len(words) == 1 for words in block), block
    assert block[0] == [f"--job-name={name}"]
    with tempfile.TemporaryDirectory() as scratch:
        ran = subprocess.run(
            ["bash", "-c", script], cwd=scratch, capture_output=True, check=False, env={"PATH": "/usr/bin:/bin"}
        )
        assert list(Path(scratch).iterdir()) == []  # nothing else ran
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.decode() == value + "\n"


@pytest.mark.parametrize("name", ["two\nlines", "cr\rhere", "nul\0", "tab\there", "x" * 201, ""])
def test_names_that_cannot_be_one_sbatch_word_are_refused(name: str) -> None:
    with pytest.raises(ValidationError):
        JobDefinition(name=name, command="true")
