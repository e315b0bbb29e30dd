"""``config_warnings``: what is configured but will do nothing."""

from __future__ import annotations

from svc_host.settings.config import SvcConfig
from svc_host.settings.warnings import WEBHOOK, WEBHOOK_VARIABLE, config_warnings


def test_a_webhook_nobody_delivers_is_one_warning_naming_the_fix() -> None:
    config = SvcConfig.model_validate({"notifications": {"chat_webhook_url": "https://chat.example/hook/SECRET"}})
    [warning] = config_warnings(config, delivered=set(), env={})
    assert warning.startswith("notifications.chat_webhook_url is set but no installed plugin delivers")
    assert "pip install svc-plugin-chat" in warning
    assert "SECRET" not in warning
    assert config_warnings(config, delivered={WEBHOOK}, env={}) == []


def test_a_webhook_set_only_through_the_variable_is_warned_about_too() -> None:
    env = {WEBHOOK_VARIABLE: "https://chat.example/hook/SECRET"}
    [warning] = config_warnings(SvcConfig(), delivered=set(), env=env)
    assert warning.startswith("CHAT_WEBHOOK_URL is set but no installed plugin delivers chat notifications")
    assert "SECRET" not in warning
    assert config_warnings(SvcConfig(), delivered={WEBHOOK}, env=env) == []


def test_no_webhook_no_warning() -> None:
    assert config_warnings(SvcConfig(), delivered=set(), env={}) == []
    assert config_warnings(SvcConfig(), delivered=set(), env={WEBHOOK_VARIABLE: ""}) == []
