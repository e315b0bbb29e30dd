"""How ``svc serve`` decides its security settings and what it tells the user at start."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from svc_host.api.security import DEFAULT_MAX_BODY_BYTES, ServerSecurity, is_loopback
from svc_host.api.sessions import CODE_LIFETIME, LOGIN_QUERY
from svc_host.api.token_file import MIN_TOKEN_LENGTH, load_or_create_token
from svc_host.errors import ConfigError

UNSPECIFIED = frozenset({"0.0.0.0", "::", "[::]", ""})  # noqa: S104 (names of "every address", compared, never bound)


def _listed(values: Iterable[str], env_value: str | None) -> frozenset[str]:
    """Option values plus a comma-separated environment variable."""
    extra = [item.strip() for item in (env_value or "").split(",")]
    return frozenset(item for item in [*values, *extra] if item)


def server_security(
    bind_host: str,
    *,
    no_auth: bool,
    allowed_hosts: Iterable[str],
    allowed_origins: Iterable[str],
    env: Mapping[str, str],
    token_file: Path,
) -> ServerSecurity:
    """The settings ``svc serve --host bind_host`` runs with; refuses what would expose the cluster.

    The token is ``SVC_API_TOKEN`` when set, else the one kept in ``token_file`` (created on first use).
    A server bound to a specific address also answers to that address (the one its login link names).
    """
    loopback = is_loopback(bind_host)
    if no_auth and not loopback:
        raise ConfigError(
            f"refusing --no-auth on {bind_host}: anyone who can reach that address could run jobs as you; "
            "serve on 127.0.0.1 or drop --no-auth (docs/security.md)"
        )
    hosts = set(_listed(allowed_hosts, env.get("SVC_ALLOWED_HOSTS")))
    if bind_host not in UNSPECIFIED:
        hosts.add(bind_host)
    token: str | None = None
    if not no_auth:
        token = env.get("SVC_API_TOKEN") or load_or_create_token(token_file)
        if len(token) < MIN_TOKEN_LENGTH:
            raise ConfigError(f"SVC_API_TOKEN must be at least {MIN_TOKEN_LENGTH} characters long")
    max_body = env.get("SVC_MAX_BODY_BYTES")
    if max_body is not None and not max_body.isdigit():
        raise ConfigError("SVC_MAX_BODY_BYTES must be a number of bytes")
    return ServerSecurity(
        token=token,
        allowed_hosts=frozenset(hosts),
        allowed_origins=_listed(allowed_origins, env.get("SVC_ALLOWED_ORIGINS")),
        max_body_bytes=int(max_body) if max_body else DEFAULT_MAX_BODY_BYTES,
    )


def base_url(bind_host: str, port: int) -> str:
    """The address to open in a browser on this machine (loopback when bound to every address)."""
    host = "127.0.0.1" if bind_host in UNSPECIFIED else bind_host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def startup_lines(
    security: ServerSecurity, *, bind_host: str, port: int, token_file: Path, login_code: str | None
) -> list[str]:
    """What ``svc serve`` prints at start. The login link carries a one-time code (never the token), and only on a
    terminal (``login_code`` is None elsewhere): a service's stderr ends up in logs, where even a code that
    expires in minutes has no place (it then names the file that holds the token)."""
    url = base_url(bind_host, port)
    lines: list[str] = []
    if security.token is None:
        lines.append(f"svc serve: dashboard at {url}")
        lines.append(
            "svc serve: warning: --no-auth: every program and user on this machine can use this server "
            "(and run jobs as you)"
        )
    elif login_code is not None:
        minutes = CODE_LIFETIME // 60
        lines.append(f"svc serve: open {url}?{LOGIN_QUERY}={login_code}")
        lines.append(f"svc serve: (one browser, within {minutes} minutes; `svc login-link --url {url}` prints another)")
    else:
        lines.append(f"svc serve: dashboard at {url} (log in with the token in {token_file} or SVC_API_TOKEN)")
    if bind_host in UNSPECIFIED:
        names = ", ".join(sorted({"localhost", "127.0.0.1", "[::1]", *security.allowed_hosts}))
        lines.append(
            f"svc serve: listening on every address; it answers only to Host {names} "
            "(add names with --allowed-host; put TLS in front: docs/security.md)"
        )
    elif not is_loopback(bind_host):
        lines.append("svc serve: not on loopback: put a TLS reverse proxy in front (docs/security.md)")
    return lines
