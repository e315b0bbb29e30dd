"""Profile env values never reach logs, although asyncssh logs every command line at INFO."""

from __future__ import annotations

import logging

import pytest

from svc_plugin_ssh.logfilter import hide_env_values, install


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (
            "env -- HF_TOKEN=hf_secret 'B=x y' sbatch --parsable",
            "env -- 'HF_TOKEN=<redacted>' 'B=<redacted>' sbatch --parsable",
        ),
        ("env -- A=1", "env -- 'A=<redacted>'"),
        ("squeue --me", "squeue --me"),
        ("echo 'unbalanced", "echo 'unbalanced"),
    ],
)
def test_env_values_are_hidden_and_the_rest_kept(line: str, shown: str) -> None:
    assert hide_env_values(line) == shown


def test_asyncssh_command_lines_are_logged_without_env_values(caplog: pytest.LogCaptureFixture) -> None:
    install()
    install()  # once is enough
    assert len(logging.getLogger("asyncssh").filters) == 1
    with caplog.at_level(logging.INFO, logger="asyncssh"):
        logging.getLogger("asyncssh").info("[conn=0, chan=1]   Command: %s", "env -- TOKEN=s3cr3t-value squeue")
    assert "s3cr3t-value" not in caplog.text
    assert "Command: env -- 'TOKEN=<redacted>' squeue" in caplog.text
