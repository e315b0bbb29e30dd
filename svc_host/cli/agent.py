"""``svc agent start|stop|status|run``: the per-user agent that keeps SSH connections and the store warm."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

import click

from svc_host.agent.launch import DEFAULT_IDLE_MINUTES
from svc_host.cli.options import json_option
from svc_host.cli.output import print_json

idle_option = click.option(
    "--idle-minutes",
    type=click.FloatRange(min=0),
    default=DEFAULT_IDLE_MINUTES,
    show_default=True,
    help="Exit after this many minutes without a command (0: never).",
)
connect_option = click.option(
    "--connect",
    "connect",
    multiple=True,
    metavar="PROFILE",
    help="Connect to this SSH profile right away (repeatable; default: the current profile, if any).",
)


@click.group()
def agent() -> None:
    """A background process of yours that keeps one SSH connection per profile and the store open, so
    `svc jobs|status|submit|logs -t PROFILE` answer sooner. An SSH command that finds none starts one for the
    next command (SVC_AGENT=manual: only `svc agent start` does; SVC_AGENT=off: never use one)."""


@agent.command()
@idle_option
@connect_option
def start(idle_minutes: float, connect: tuple[str, ...]) -> None:
    """Start the agent in the background (nothing to do if it runs)."""
    from svc_host.agent import launch
    from svc_host.agent.place import Place

    place = Place.from_env()
    place.secure_dir(create=True)
    running = launch.ping(place)
    if running is not None:
        click.echo(f"the svc agent is already running (pid {running['pid']}) on {running['socket']}")
        return
    child = launch.spawn(place, idle_minutes=idle_minutes, connect=list(connect) or _current_profile())
    answer = launch.wait_listening(place, child)
    if answer is None:
        raise click.ClickException(f"the svc agent did not start; see {place.log_file}{_last_line(place.log_file)}")
    lasting = "until stopped" if not idle_minutes else f"until {idle_minutes:g} min pass without a command"
    click.echo(f"svc agent running (pid {answer['pid']}) on {answer['socket']}; it stays {lasting}")


@agent.command()
def stop() -> None:
    """Stop the agent (its connections close; commands connect themselves again)."""
    from svc_host.agent import client, launch
    from svc_host.agent.place import Place

    place = Place.from_env()
    try:
        answer = client.call(place, "stop", {})
    except client.AgentUnavailable:
        click.echo("no svc agent is running")
        return
    if not launch.wait_stopped(place):
        raise click.ClickException(f"the svc agent (pid {answer['pid']}) is still running; see {place.log_file}")
    click.echo(f"stopped the svc agent (pid {answer['pid']})")


@agent.command()
@json_option
def status(as_json: bool) -> None:
    """Say whether the agent runs, since when and what it served; exit 1 when none runs."""
    from svc_host.agent import launch
    from svc_host.agent.place import Place

    answer = launch.ping(Place.from_env())
    if as_json:
        print_json({"running": answer is not None, **(answer or {})})
    elif answer is not None:
        started = datetime.fromisoformat(answer["started_at"]).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        idle = "never" if not answer["idle_minutes"] else f"after {answer['idle_minutes']:g} min without a command"
        click.echo(f"svc agent {answer['version']} running (pid {answer['pid']}) since {started}")
        click.echo(f"  socket: {answer['socket']}")
        click.echo(f"  log: {answer['log']}")
        click.echo(f"  exits: {idle}")
        click.echo(f"  commands served: {answer['requests']} ({', '.join(answer['transports']) or 'no transport yet'})")
        for served in answer.get("sessions", []):
            click.echo(f"  session {served['cluster']}:{served['job_id']} on http://127.0.0.1:{served['port']}/")
    else:
        click.echo("no svc agent is running (svc agent start starts one)")
    if answer is None:
        sys.exit(1)


@agent.command()
@idle_option
@connect_option
def run(idle_minutes: float, connect: tuple[str, ...]) -> None:
    """Be the agent in the foreground (what `start` runs; for a service manager). Logs to agent.log in the
    state directory."""
    from svc_host.agent import server
    from svc_host.agent.place import Place

    server.run(Place.from_env(), idle_seconds=idle_minutes * 60 or None, connect=list(connect) or _current_profile())


def _current_profile() -> list[str]:
    import os

    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.profiles import ProfileStore

    current = ProfileStore(SvcPaths.from_env().profiles_file).host_config(env=os.environ).current_profile
    return [current] if current else []


def _last_line(path: Any) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""
