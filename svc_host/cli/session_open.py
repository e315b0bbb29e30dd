"""``svc session open`` (and ``start --open``) without ``svc serve``: through the svc agent, else in this process.

When an svc agent answers (``SVC_AGENT`` not ``off``, a remote transport), the agent waits until the session is
ready and serves it on a port of its own on 127.0.0.1, through the SSH connection it already holds
(``agent.session_ports``); the CLI prints the one-time link, opens it in the browser unless told not to, and returns
while the agent serves the session until it ends. Without an agent (or with ``local``, which the agent leaves to
the caller's environment) this process does the same: it waits until the session is ready (running the session
watch itself), serves the origin app ``svc serve`` runs on its sessions port on 127.0.0.1 and a free port, reaching
the app through its own transport (over SSH: a direct-tcpip channel through the login node), and serves until
Ctrl-C or the session's end.
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
    """The session once ready (its state told on stderr while it waits); an ``InvalidStateError`` when it ended
    (``error: ...``, as every other command's failure)."""
    from svc_host.errors import InvalidStateError
    from svc_host.sessions import manage

    said = ""
    while True:
        row = await manage.detail(host, cluster, job_id)
        if row.state == "ready":
            return row
        if row.state == "ended":
            raise InvalidStateError(manage.ended_words(row))
        said = _tell_wait(cluster, job_id, row.state, said)
        await asyncio.sleep(WAIT_TICK)


def _tell_wait(cluster: str, job_id: str, state: str, said: str) -> str:
    """Say on stderr what the session waits for, once per state; returns the state said."""
    if state != said:
        click.echo(f"session {job_id} on {cluster!r} is {state}; waiting until it is ready", err=True)
    return state


def through_agent(cluster: str, job_id: str) -> str | None:
    """The session's one-time link, served by the svc agent once ready (its state told on stderr meanwhile);
    ``None`` when no agent does it (none runs, ``SVC_AGENT=off``, it declined or was lost), so this process
    serves the session itself. The session's own errors (unknown, ended) are raised as the command's."""
    import os

    from svc_host.agent import client
    from svc_host.agent.place import Place, agent_mode

    if agent_mode(os.environ) == "off":
        return None
    try:
        place = Place.from_env()
    except (OSError, RuntimeError):  # no home directory to find the setup by: no agent either
        return None
    said = ""
    while True:
        args = {"transport": cluster, "job_id": job_id, "wait": bool(said)}  # the first at once: say the state
        try:
            answer = client.call(place, "session_open", args)
        except client.AgentUnavailable:
            return None
        if not isinstance(answer, dict):
            return None
        if isinstance(answer.get("url"), str):
            return str(answer["url"])
        said = _tell_wait(cluster, job_id, str(answer.get("state")), said)


def _show(url: str, *, browser: bool, serving: str) -> None:
    """Print the link (stdout: a script reads it there), say who serves it, open it unless told not to."""
    click.echo(url)
    click.echo(f"{serving} (the link is good once, for a minute; `svc session open` gives a new one)", err=True)
    sys.stdout.flush()
    if browser:
        import webbrowser

        if not webbrowser.open(url):  # a terminal without a display (over SSH): nothing opened
            click.echo("no browser to open here: open the link above in yours", err=True)


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
        _show(url, browser=browser, serving="serving the session from this terminal until Ctrl-C")
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
    """Through the agent when one serves it, else ``open_session`` with a CLI host; Ctrl-C ends it quietly."""
    from svc_host.cli.options import with_host

    with contextlib.suppress(KeyboardInterrupt):
        url = through_agent(cluster, job_id)
        if url is not None:
            _show(url, browser=browser, serving="the svc agent serves the session until it ends")
            return
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)

        async def work(host: Host) -> None:
            await open_session(host, cluster, job_id, browser=browser)

        with_host(work)
