"""A chat webhook with no plugin to deliver it is said, not silently ignored: ``svc plugins`` (run as a user runs it,
with the chat plugin disabled as if it were not installed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.testing.serve import isolated_env

WARNING = (
    "warning: notifications.chat_webhook_url is set but no installed plugin delivers chat notifications, so nothing"
    " will be sent: install svc-plugin-chat (pip install svc-plugin-chat), or remove 'chat' from SVC_DISABLE_PLUGINS"
)


def plugins(tmp_path: Path, *, webhook: str | None, disabled: str) -> subprocess.CompletedProcess[str]:
    env = isolated_env(tmp_path, token="unused-token-0123456789abcdef") | {"SVC_DISABLE_PLUGINS": disabled}
    if webhook is not None:
        user = Path(env["XDG_CONFIG_HOME"]) / "svc"
        user.mkdir(parents=True)
        (user / "config.json").write_text(json.dumps({"notifications": {"chat_webhook_url": webhook}}))
    return subprocess.run(
        [sys.executable, "-m", "svc_host", "plugins"], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_a_webhook_without_the_chat_plugin_is_a_warning(tmp_path: Path) -> None:
    result = plugins(tmp_path, webhook="https://chat.example/hook/SECRET", disabled="chat")
    assert result.returncode == 0, result.stderr
    assert WARNING in result.stderr.splitlines()
    assert "SECRET" not in result.stderr + result.stdout
    assert "chat" in result.stdout  # listed, as disabled


def test_a_webhook_only_in_chat_webhook_url_is_a_warning_too(tmp_path: Path) -> None:
    """The chat plugin reads ``CHAT_WEBHOOK_URL`` when no config layer sets the webhook: unset it, and the variable is
    as silently ignored as the key would be."""
    env = isolated_env(tmp_path, token="unused-token-0123456789abcdef") | {
        "SVC_DISABLE_PLUGINS": "chat",
        "CHAT_WEBHOOK_URL": "https://chat.example/hook/SECRET",
    }
    result = subprocess.run(
        [sys.executable, "-m", "svc_host", "plugins"], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert WARNING.replace("notifications.chat_webhook_url", "CHAT_WEBHOOK_URL") in result.stderr.splitlines()
    assert "SECRET" not in result.stderr + result.stdout


@pytest.mark.parametrize(("webhook", "disabled"), [("https://chat.example/hook", ""), (None, "chat")])
def test_no_warning_when_something_delivers_or_nothing_is_asked(
    tmp_path: Path, webhook: str | None, disabled: str
) -> None:
    result = plugins(tmp_path, webhook=webhook, disabled=disabled)
    assert result.returncode == 0, result.stderr
    assert "chat_webhook_url" not in result.stderr
