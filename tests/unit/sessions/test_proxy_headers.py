"""Which headers cross the session proxy: the secret goes to the app only, svc's cookies never leave svc."""

from __future__ import annotations

from svc_host.sessions.proxy_headers import has_body, to_app, to_browser, without_own_cookies

BROWSER = [
    (b"Host", b"127.0.0.1:8001"),
    (b"Connection", b"keep-alive, X-Hop"),
    (b"X-Hop", b"only for this hop"),
    (b"Upgrade-Insecure-Requests", b"1"),
    (b"Cookie", b"svc_session_8000=login; _xsrf=abc; svc_s_lab_12=entry; theme=dark"),
    (b"X-Svc-Session-Secret", b"forged-by-a-page"),
    (b"Authorization", b"token forged"),
    (b"Accept", b"*/*"),
]


def test_the_app_gets_the_secret_and_the_kinds_headers_never_the_browsers_versions() -> None:
    sent = to_app(BROWSER, "s3cret", {"Authorization": "token s3cret"}, websocket=False)
    assert (b"x-svc-session-secret", b"s3cret") in sent
    assert (b"authorization", b"token s3cret") in sent
    assert [name for name, _ in sent].count(b"x-svc-session-secret") == 1
    assert [name for name, _ in sent].count(b"authorization") == 1
    assert (b"cookie", b"_xsrf=abc; theme=dark") in sent
    assert (b"host", b"127.0.0.1:8001") in sent  # the app's own origin checks compare Host and Origin
    names = {name for name, _ in sent}
    assert not names & {b"connection", b"x-hop"}
    assert b"upgrade-insecure-requests" in names  # not hop-by-hop, only a look-alike


def test_only_svcs_cookies_leave_the_cookie_header_and_an_empty_one_is_dropped() -> None:
    assert without_own_cookies(b"svc_a=1;svc_b=2") == b""
    assert without_own_cookies(b"a=1; svc_x=2; b=svc_y") == b"a=1; b=svc_y"
    assert without_own_cookies(b"__Host-svc_session_443=login; __Host-app=1") == b"__Host-app=1"  # HTTPS's name
    sent = to_app([(b"cookie", b"svc_session_8000=login")], "s", {}, websocket=False)
    assert [name for name, _ in sent] == [b"x-svc-session-secret"]


def test_a_chunked_body_stays_framed_and_a_websocket_handshake_is_left_to_wsproto() -> None:
    chunked = [(b"transfer-encoding", b"chunked"), (b"sec-websocket-key", b"k")]
    assert (b"transfer-encoding", b"chunked") in to_app(chunked, "s", {}, websocket=False)
    upgrade = [*BROWSER, (b"sec-websocket-key", b"k"), (b"sec-websocket-protocol", b"v1.kernel.websocket.jupyter.org")]
    names = {name for name, _ in to_app(upgrade, "s", {}, websocket=True)}
    assert not names & {b"host", b"sec-websocket-key", b"sec-websocket-protocol", b"transfer-encoding"}
    assert has_body(chunked)
    assert has_body([(b"content-length", b"12")])
    assert not has_body([(b"content-length", b"0")])
    assert not has_body([])


def test_the_browser_never_gets_the_secret_or_hop_by_hop_headers_from_the_app() -> None:
    answered = [
        (b"Content-Type", b"text/html"),
        (b"X-Svc-Session-Secret", b"echoed"),
        (b"Transfer-Encoding", b"chunked"),
        (b"Connection", b"close"),
        (b"Set-Cookie", b"_xsrf=abc; Path=/s/lab/12/"),
    ]
    assert to_browser(answered) == [(b"content-type", b"text/html"), (b"set-cookie", b"_xsrf=abc; Path=/s/lab/12/")]
