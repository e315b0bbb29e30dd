"""``svc session open`` (and ``start --open``) without ``svc serve``: the sessions' origin in the CLI's own process.

The CLI waits until the session is ready (running the session watch itself, so no server is needed), then serves
the same origin app ``svc serve`` runs on its sessions port, on ``127.0.0.1`` and a free port, reaching the app
through the CLI's own transport (over SSH: a direct-tcpip channel through the login node, on the connection this
process opens; the svc agent's connection carries calls, not byte streams). It prints a one-time link, opens it in
the browser unless told not to, and serves until Ctrl-C or the session's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import uvicorn

    from svc_host.host import Host
    from svc_host.store.tables import InteractiveSessionRecord

WAIT_TICK = 1.0
"""Seconds between looks at the session's state while it starts, and while it is served."""


async def ready_session(host: Host, cluster: str, job_id: str) -> InteractiveSessionRecord:
    """The session once ready (its state told on stderr while it waits); a ``ClickException`` when it ended."""
    from svc_host.sessions import manage

    said = ""
    while True:
        row = await manage.detail(host, cluster, job_id)
        if row.state == "ready":
            return row
        if row.state == "ended":
            detail = f": {row.end_detail.splitlines()[-1]}" if row.end_detail else ""
            raise click.ClickException(f"session {job_id} on {cluster!r} ended ({row.end_reason}){detail}")
        if row.state != said:
            click.echo(f"session {job_id} on {cluster!r} is {row.state}; waiting until it is ready", err=True)
            said = row.state
        await asyncio.sleep(WAIT_TICK)


async def open_session(host: Host, cluster: str, job_id: str, *, browser: bool) -> None:
    """Wait for the session, serve it on 127.0.0.1, print its link (and open it), serve until stopped."""
    import uvicorn

    from svc_host.api.security import ServerSecurity
    from svc_host.cli.servers import bound
    from svc_host.sessions import manage, reach
    from svc_host.sessions.entry import KEY_FILE, load_or_create_key
    from svc_host.sessions.origin import SessionsOrigin
    from svc_host.sessions.watch import SessionWatch
    from svc_host.settings.paths import SvcPaths

    await manage.detail(host, cluster, job_id)  # an unknown session is one line before anything starts
    watch = SessionWatch(host, interval=WAIT_TICK)
    await watch.start()
    try:
        row = await ready_session(host, cluster, job_id)
        origin = SessionsOrigin(
            reach.resolver(host),
            key=load_or_create_key(SvcPaths.from_env().state_dir / KEY_FILE),
            host_allowed=ServerSecurity(token=None).host_allowed,  # loopback names only
            on_traffic=reach.note,
        )
        sock = bound("127.0.0.1", 0)
        if sock is None:
            raise click.ClickException("cannot listen on 127.0.0.1 for the session (no free port)")
        sock.listen(128)  # before the link is printed: a browser quicker than uvicorn's start waits in the backlog
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            origin, host="127.0.0.1", port=port, log_level="warning", ws="wsproto", server_header=False
        )
        server = uvicorn.Server(config)
        spec = manage.kinds(host).get(row.kind)
        url = reach.entry_url(
            reach.server_address("127.0.0.1", port),
            cluster,
            job_id,
            spec.open_path if spec is not None else "",
            origin.mint_code(cluster, job_id),
        )
        click.echo(url)
        click.echo("serving the session here until Ctrl-C (the link is good once, for a minute)", err=True)
        sys.stdout.flush()
        if browser:
            import webbrowser

            webbrowser.open(url)
        ended = asyncio.create_task(_until_ended(host, cluster, job_id, server))
        try:
            await server.serve([sock])
        finally:
            ended.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ended
    finally:
        await watch.close()


async def _until_ended(host: Host, cluster: str, job_id: str, server: uvicorn.Server) -> None:
    """Stop serving once the session ended (stopped elsewhere, its time limit, its app exited)."""
    from svc_host.sessions import manage

    while True:
        await asyncio.sleep(WAIT_TICK)
        row = await manage.detail(host, cluster, job_id)
        if row.state == "ended":
            click.echo(f"session {job_id} on {cluster!r} ended ({row.end_reason})", err=True)
            server.should_exit = True
            return


def run_open(cluster: str, job_id: str, *, browser: bool) -> None:
    """``open_session`` with a CLI host; Ctrl-C ends it quietly."""
    from svc_host.cli.options import with_host

    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)

    async def work(host: Host) -> None:
        await open_session(host, cluster, job_id, browser=browser)

    with contextlib.suppress(KeyboardInterrupt):
        with_host(work)
