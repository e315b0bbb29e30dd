"""How ``svc serve`` picks its security settings, its token file, and what it prints at start."""

from __future__ import annotations

import logging
import stat
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from svc_host.api.launch import server_security, startup_lines
from svc_host.api.security import TOKEN_QUERY, host_name, is_loopback
from svc_host.api.sessions import LOGIN_QUERY
from svc_host.api.token_file import load_or_create_token
from svc_host.errors import ConfigError
from svc_host.sessions.origin import CODE_QUERY
from svc_host.settings.secrets import RedactQueryFilter


def settings(tmp_path: Path, bind: str = "127.0.0.1", *, no_auth: bool = False, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return server_security(
        bind, no_auth=no_auth, allowed_hosts=(), allowed_origins=(), env=env or {}, token_file=tmp_path / "api-token"
    )


def test_the_generated_token_is_kept_0600_and_reused(tmp_path: Path) -> None:
    first = settings(tmp_path).token
    assert first is not None
    assert len(first) >= 40
    assert stat.S_IMODE((tmp_path / "api-token").stat().st_mode) == 0o600
    assert settings(tmp_path).token == first


def test_a_token_file_readable_by_others_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "api-token"
    path.write_text("x" * 32 + "\n")
    path.chmod(0o644)
    assert load_or_create_token(path) == "x" * 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_servers_starting_together_agree_on_one_token(tmp_path: Path) -> None:
    path = tmp_path / "state" / "api-token"
    tokens: list[str] = []
    threads = [threading.Thread(target=lambda: tokens.append(load_or_create_token(path))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(tokens)) == 1
    assert [p.name for p in path.parent.iterdir()] == ["api-token"]  # no temp file left behind


def test_svc_api_token_wins_and_must_be_long_enough(tmp_path: Path) -> None:
    assert settings(tmp_path, env={"SVC_API_TOKEN": "t" * 20}).token == "t" * 20
    assert not (tmp_path / "api-token").exists()
    with pytest.raises(ConfigError, match="at least 16"):
        settings(tmp_path, env={"SVC_API_TOKEN": "short"})


def test_no_auth_only_on_loopback(tmp_path: Path) -> None:
    assert settings(tmp_path, "::1", no_auth=True).token is None
    for bind in ("0.0.0.0", "10.1.2.3", "login.example"):
        with pytest.raises(ConfigError, match="refusing --no-auth"):
            settings(tmp_path, bind, no_auth=True)


def test_a_specific_address_is_answered_and_env_lists_add_names(tmp_path: Path) -> None:
    security = settings(tmp_path, "10.1.2.3", env={"SVC_ALLOWED_HOSTS": "svc.example, ,Other.Example"})
    assert security.allowed_hosts == {"10.1.2.3", "svc.example", "other.example"}
    assert settings(tmp_path, "0.0.0.0").allowed_hosts == frozenset()
    with pytest.raises(ConfigError, match="SVC_MAX_BODY_BYTES"):
        settings(tmp_path, env={"SVC_MAX_BODY_BYTES": "lots"})


def test_startup_lines_print_a_login_code_never_the_token(tmp_path: Path) -> None:
    security = settings(tmp_path, env={"SVC_API_TOKEN": "t" * 20})
    on_tty = startup_lines(security, bind_host="127.0.0.1", port=8000, token_file=tmp_path / "f", login_code="C0DE")
    assert on_tty[0] == "svc serve: open http://127.0.0.1:8000/?login_code=C0DE"
    assert "within 10 minutes" in on_tty[1]
    logged = startup_lines(security, bind_host="127.0.0.1", port=8000, token_file=tmp_path / "f", login_code=None)
    assert "?login_code=" not in "\n".join(logged)
    assert str(tmp_path / "f") in logged[0]
    everywhere = startup_lines(security, bind_host="0.0.0.0", port=80, token_file=tmp_path / "f", login_code="C0DE")
    assert everywhere[0] == "svc serve: open http://127.0.0.1:80/?login_code=C0DE"
    assert "--allowed-host" in everywhere[2]
    for lines in (on_tty, logged, everywhere):
        assert "t" * 20 not in "\n".join(lines)


@pytest.mark.parametrize("bind", ["127.0.0.2", "127.0.0.1", "localhost", "::1", "10.1.2.3", "0.0.0.0"])
def test_the_printed_link_names_a_host_the_server_answers_to(tmp_path: Path, bind: str) -> None:
    security = settings(tmp_path, bind, env={"SVC_API_TOKEN": "t" * 20})
    lines = startup_lines(security, bind_host=bind, port=8000, token_file=tmp_path / "f", login_code="C0DE")
    link = lines[0].removeprefix("svc serve: open ")
    assert security.host_allowed(urlsplit(link).netloc), link


def test_the_access_log_filter_redacts_login_links() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        "",
        0,
        '%s - "%s %s"',
        ("1.2.3.4", "GET", "/a?x=1&token=abc&y=2&login_code=C0DE"),
        None,
    )
    assert RedactQueryFilter(LOGIN_QUERY, TOKEN_QUERY).filter(record)
    assert record.getMessage() == '1.2.3.4 - "GET /a?x=1&token=<redacted>&y=2&login_code=<redacted>"'


def test_the_access_log_filter_redacts_session_entry_codes() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        "",
        0,
        '%s - "%s %s"',
        ("1.2.3.4", "GET", "/s/lab/12/lab?svc_code=C0DE&x=1"),
        None,
    )
    assert RedactQueryFilter(CODE_QUERY).filter(record)
    assert record.getMessage() == '1.2.3.4 - "GET /s/lab/12/lab?svc_code=<redacted>&x=1"'


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8000", "localhost"),
        ("[::1]:8000", "::1"),
        ("EXAMPLE.org", "example.org"),
        ("a b", None),
        ("x:y", None),
    ],
)
def test_host_header_names(header: str, name: str | None) -> None:
    assert host_name(header) == name


def test_loopback_binds() -> None:
    assert is_loopback("localhost")
    assert is_loopback("127.0.0.2")
    assert is_loopback("::1")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("example.org")
