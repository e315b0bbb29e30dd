"""Getting into a session: one-time codes, cookies signed for one session, the key kept 0600."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from svc_host.errors import ConfigError
from svc_host.sessions.entry import CookieSigner, EntryCodes, load_or_create_key
from svc_host.sessions.origin import session_of


def test_a_code_opens_its_session_once_within_its_minute() -> None:
    now = [1000.0]
    codes = EntryCodes(clock=lambda: now[0])
    code = codes.mint("lab", "12")
    assert codes.redeem(code) == ("lab", "12")
    assert codes.redeem(code) is None  # once
    late = codes.mint("lab", "12")
    now[0] += 61
    assert codes.redeem(late) is None
    assert codes.redeem(None) is None
    assert codes.redeem("made-up") is None


def test_a_cookie_is_good_for_its_own_session_until_it_expires() -> None:
    signer = CookieSigner(b"k" * 32)
    value = signer.sign("lab", "12", 5000)
    assert signer.expiry(value, "lab", "12", now=4999) == 5000
    assert signer.expiry(value, "lab", "12", now=5000) is None  # expired
    assert signer.expiry(value, "lab", "13", now=100) is None  # another job
    assert signer.expiry(value, "lab2", "12", now=100) is None  # another cluster
    assert signer.expiry(value.replace("5000.", "9000."), "lab", "12", now=100) is None  # a longer life, forged
    assert CookieSigner(b"j" * 32).expiry(value, "lab", "12", now=100) is None  # another server's key
    assert signer.expiry("", "lab", "12", now=100) is None
    assert signer.expiry("garbage", "lab", "12", now=100) is None


def test_the_key_is_created_0600_kept_across_restarts_and_agreed_on(tmp_path: Path) -> None:
    path = tmp_path / "state" / "session-proxy-key"
    keys: list[bytes] = []
    threads = [threading.Thread(target=lambda: keys.append(load_or_create_key(path))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(keys)) == 1
    assert len(keys[0]) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_key(path) == keys[0]
    assert not [p for p in path.parent.iterdir() if p.name != path.name]  # no temporary file left
    path.write_text("short\n")
    with pytest.raises(ConfigError, match="damaged; delete the file"):
        load_or_create_key(path)


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("/s/lab/12/lab/tree", ("lab", "12", "/lab/tree")),
        ("/s/lab/12/", ("lab", "12", "/")),
        ("/s/lab/12", ("lab", "12", None)),
        ("/s/lab24/123_4/x", ("lab24", "123_4", "/x")),
        ("/s/lab/abc/", None),
        ("/s/../12/", None),
        ("/api/jobs", None),
        ("/s/lab/12x/", None),
    ],
)
def test_session_paths(path: str, found: tuple[str, str, str | None] | None) -> None:
    assert session_of(path) == found
