"""``config_warnings``: what is configured but will do nothing."""

from __future__ import annotations

from svc_host.settings.config import SvcConfig
from svc_host.settings.warnings import WEBHOOK, config_warnings


def test_a_webhook_nobody_delivers_is_one_warning_naming_the_fix() -> None:
    config = SvcConfig.model_validate({"notifications": {"chat_webhook_url": "https://chat.example/hook/SECRET"}})
    [warning] = config_warnings(config, delivered=set())
    assert warning.startswith("notifications.chat_webhook_url is set but no installed plugin delivers")
    assert "pip install svc-plugin-chat" in warning
    assert "SECRET" not in warning
    assert config_warnings(config, delivered={WEBHOOK}) == []


def test_no_webhook_no_warning() -> None:
    assert config_warnings(SvcConfig(), delivered=set()) == []
