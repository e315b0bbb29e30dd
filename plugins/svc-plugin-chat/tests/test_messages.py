"""Which changes become messages, in which shape, and which webhook URLs are accepted."""

from __future__ import annotations

import pytest
from svc_host.plugin import ConfigError, Event

from svc_plugin_chat.messages import message_for, payload_for
from svc_plugin_chat.rules import DEFAULT_RULES, parse_rules
from svc_plugin_chat.settings import ChatConfig, ChatSettings, format_for, validate_url


def job(to: str, job_id: str = "42") -> Event:
    payload = {"transport": "local", "job_id": job_id, "name": "train", "from": "RUNNING", "to": to, "exit_code": 3}
    return Event(name="job.status_changed", payload=payload)


def run(to: str, sweep_id: int | None = None) -> Event:
    payload = {"id": "r1", "workflow_name": "pipe", "from": "running", "to": to, "error": None, "sweep_id": sweep_id}
    return Event(name="workflow_run.status_changed", payload=payload)


def sweep(to: str) -> Event:
    counts = {"cells_completed": 8, "cells_failed": 2, "cells_cancelled": 0, "cells_running": 0, "cells_pending": 0}
    return Event(name="sweep_run.status_changed", payload={"id": 3, "name": "lr", "to": to, "cell_count": 10, **counts})


def test_defaults_notify_failed_jobs_and_ended_runs_and_sweeps() -> None:
    assert message_for(job("RUNNING"), DEFAULT_RULES) is None
    assert message_for(job("COMPLETED"), DEFAULT_RULES) is None
    failed = message_for(job("FAILED"), DEFAULT_RULES)
    assert failed is not None
    assert failed.text == "Job 42 (train) on local ended FAILED, exit code 3."
    assert message_for(job("TIMEOUT"), DEFAULT_RULES) is not None
    assert message_for(run("running"), DEFAULT_RULES) is None
    assert message_for(run("completed"), DEFAULT_RULES) is not None
    summary = message_for(sweep("failed"), DEFAULT_RULES)
    assert summary is not None
    assert summary.text == "Sweep 3 (lr) failed: 10 cells, 8 completed, 2 failed, 0 cancelled, 0 running, 0 pending."


def test_a_sweep_cell_never_notifies_on_its_own() -> None:
    rules = parse_rules("workflow_run:*")
    assert message_for(run("failed", sweep_id=3), rules) is None
    assert message_for(run("failed"), rules) is not None


def test_rules_are_configurable_and_mistakes_are_named() -> None:
    rules = parse_rules("job:completed, sweep_run:terminal")
    assert message_for(job("COMPLETED"), rules) is not None
    assert message_for(job("FAILED"), rules) is None
    assert message_for(run("completed"), rules) is None
    with pytest.raises(ConfigError, match="SVC_CHAT_EVENTS item 'jobs:failed': kind must be one of"):
        parse_rules("jobs:failed")


def test_one_key_per_change() -> None:
    first, again = message_for(job("FAILED"), DEFAULT_RULES), message_for(job("FAILED"), DEFAULT_RULES)
    assert first is not None
    assert again is not None
    assert first.key == again.key == "job:local:42:FAILED"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://hooks.slack.com/services/T/B/x", "slack"),
        ("https://chat.example.org/hooks/abc", "slack"),
        ("https://discord.com/api/webhooks/1/x", "discord"),
        ("https://acme.webhook.office.com/webhookb2/x", "teams"),
    ],
)
def test_the_shape_follows_the_url(url: str, expected: str) -> None:
    assert format_for(url, None) == expected
    assert format_for(url, "mattermost") == "mattermost"


def test_each_service_gets_its_shape() -> None:
    message = message_for(job("FAILED"), DEFAULT_RULES)
    assert message is not None
    assert payload_for(message, "slack") == {"text": ":x: svc: Job 42 (train) on local ended FAILED, exit code 3."}
    assert payload_for(message, "mattermost")["username"] == "svc"
    assert payload_for(message, "discord")["content"].startswith("svc: Job 42")
    teams = payload_for(message, "teams")
    assert teams["@type"] == "MessageCard"
    assert teams["title"] == "svc: Job 42 FAILED"


def test_names_cannot_ping_a_channel_or_spoof_a_link() -> None:
    hostile = "<!channel> @channel [docs](https://evil.example) <https://evil.example|docs> *x*"
    payload = {"transport": "local", "job_id": "7", "name": hostile, "to": "FAILED", "exit_code": 1}
    message = message_for(Event(name="job.status_changed", payload=payload), DEFAULT_RULES)
    assert message is not None
    slack = payload_for(message, "slack")["text"]
    assert "<!channel>" not in slack
    assert "<https://evil.example|docs>" not in slack
    assert "&lt;!channel&gt;" in slack
    mattermost = payload_for(message, "mattermost")["text"]
    assert "@channel" not in mattermost
    assert "[docs](https://evil.example)" not in mattermost
    assert "\\[docs\\]\\(https://evil.example\\)" in mattermost
    discord = payload_for(message, "discord")
    assert "[docs](" not in discord["content"]
    assert discord["allowed_mentions"] == {"parse": []}
    teams = payload_for(message, "teams")
    assert "[docs](" not in teams["text"]
    assert "\\*x\\*" in teams["text"]


def test_urls_must_be_https_or_allowed_http() -> None:
    assert validate_url("https://hooks.slack.com/x", frozenset()) == "https://hooks.slack.com/x"
    with pytest.raises(ConfigError, match=r"uses plain http; use https, or allow this host with SVC_CHAT_ALLOW_HTTP"):
        validate_url("http://chat.internal/hooks/secret", frozenset())
    assert validate_url("http://chat.internal/hooks/secret", frozenset({"chat.internal"}))
    with pytest.raises(ConfigError) as caught:
        validate_url("ftp://chat.internal/hooks/secret", frozenset())
    assert "secret" not in str(caught.value)
    with pytest.raises(ConfigError, match="user name or password"):
        validate_url("https://me:pw@chat.internal/x", frozenset())


def test_settings_from_the_environment() -> None:
    env = {
        "CHAT_WEBHOOK_URL": "https://x.example/h",
        "SVC_CHAT_FORMAT": "Teams",
        "SVC_CHAT_ALLOW_HTTP_HOSTS": "127.0.0.1, Chat.Internal",
    }
    settings = ChatSettings.from_env(None, env)
    assert settings.url == "https://x.example/h"
    assert settings.format == "teams"
    assert settings.allow_http_hosts == {"127.0.0.1", "chat.internal"}
    assert ChatSettings.from_env("https://config.example/h", env).url == "https://config.example/h"
    with pytest.raises(ConfigError, match="SVC_CHAT_FORMAT 'irc' is not a chat format"):
        ChatSettings.from_env(None, {"SVC_CHAT_FORMAT": "irc"})


def test_settings_from_the_plugins_config_section_with_each_set_variable_winning() -> None:
    section = ChatConfig(format="discord", events="job:FAILED", allow_http_hosts=["Hooks.Lan"], retry_seconds=2)
    settings = ChatSettings.from_env("https://x.example/h", {}, section)
    assert (settings.format, settings.allow_http_hosts, settings.retry_seconds) == ("discord", {"hooks.lan"}, 2.0)
    assert settings.rules == parse_rules("job:FAILED")
    overridden = ChatSettings.from_env(None, {"SVC_CHAT_FORMAT": "slack", "SVC_CHAT_RETRY_SECONDS": "7"}, section)
    assert (overridden.format, overridden.retry_seconds, overridden.timeout_seconds) == ("slack", 7.0, 10.0)
    with pytest.raises(ValueError, match="events"):
        ChatConfig(events="nosuchkind:FAILED")
