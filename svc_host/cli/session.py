"""``svc session start|list|open|stop``: interactive sessions (a Slurm job running a web app) from a terminal.

In ``start``, ``-t`` is the time limit, as sbatch's ``-t`` (the issue's ``svc session start jupyter -G 1 -t 2:00``),
so the cluster is ``--transport`` there; ``list`` and ``stop`` take ``-t/--transport`` like every other command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from svc_host.cli.options import check_job_id, json_option, transport_option, with_host
from svc_host.cli.output import print_json, print_table

if TYPE_CHECKING:
    from svc_host.host import Host


@click.group()
def session() -> None:
    """Interactive sessions: JupyterLab, TensorBoard or any web app on a compute node."""


def _fields(pairs: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--field expects KEY=VALUE, got {pair!r}")
        found[key] = value
    return found


@session.command()
@click.argument("kind")
@click.option("--gpus", "-G", metavar="[TYPE:]N", help="GPUs: -G 1 or -G a100:1.")
@click.option("--time", "-t", "time_limit", help="Time limit as sbatch reads it: 2:00:00 is two hours.")
@click.option("--partition", "-p", help="Partition to run in.")
@click.option("--field", "field_pairs", multiple=True, metavar="KEY=VALUE", help="A field of the kind's form.")
@click.option("--transport", default="local", show_default=True, help="Transport (SSH profile name or 'local').")
@click.option("--open", "then_open", is_flag=True, help="Wait until it is ready, then open it (as `svc session open`).")
@click.option("--no-browser", is_flag=True, help="With --open: print the link, do not start a browser.")
@json_option
def start(
    kind: str,
    gpus: str | None,
    time_limit: str | None,
    partition: str | None,
    field_pairs: tuple[str, ...],
    transport: str,
    then_open: bool,
    no_browser: bool,
    as_json: bool,
) -> None:
    """Start a session of KIND and print its job id (then `svc session list` shows its state, `svc session open`
    opens it); with --open, wait until it is ready and open it here. Through the svc agent when one runs, as
    `svc submit`."""
    from svc_host.cli.job_session import JobSession

    fields = _fields(field_pairs)
    with JobSession(transport) as calls:
        view: dict[str, Any] = calls.call(
            "session_start",
            transport=transport,
            kind=kind,
            fields=fields,
            gpus=gpus,
            time_limit=time_limit,
            partition=partition,
        )
    if as_json:
        print_json(view)
    else:
        if not then_open:
            click.echo(view["job_id"])  # stdout: what a script reads
        click.echo(_started_words(view, transport, opening=then_open), err=True)
    if then_open:
        from svc_host.cli.session_open import run_open

        run_open(transport, view["job_id"], browser=not no_browser)


SHORT_LIMIT = 60
"""Seconds under which a time limit is most likely a misreading of sbatch's forms (``0:10`` is ten seconds)."""


def _started_words(view: dict[str, Any], transport: str, *, opening: bool) -> str:
    """What a person reads on stderr after a start: the session, its time limit in H:MM:SS (the form it was given
    in is sbatch's, where ``0:10`` is ten seconds), and what to do next."""
    from svc_host.domain.times import clock

    job_id, limit = view["job_id"], view["time_limit_seconds"]
    said = f"session {job_id} on {transport!r} started, time limit {clock(limit)}" if limit else ""
    said = said or f"session {job_id} on {transport!r} started, no time limit of its own (the partition's)"
    if limit and limit < SHORT_LIMIT:
        said += f" (as sbatch reads -t: for {limit} minutes write -t {limit} or -t 0:{limit:02d}:00)"
    if opening:
        return said
    return f"{said}; `svc session open {job_id} --transport {transport}` opens it once ready"


@session.command(name="open")
@click.argument("job_id")
@transport_option
@click.option("--no-browser", is_flag=True, help="Print the link, do not start a browser.")
def open_session(job_id: str, transport: str, no_browser: bool) -> None:
    """Open a session in the browser without svc serve: wait until it is ready, serve it on 127.0.0.1 through
    this process's connection to the cluster, print a one-time link (and open it), serve until Ctrl-C."""
    from svc_host.cli.session_open import run_open

    check_job_id(job_id)
    run_open(transport, job_id, browser=not no_browser)


@session.command(name="list")
@click.option("--transport", "-t", help="Only this cluster's sessions (default: every cluster's).")
@json_option
def list_sessions(transport: str | None, as_json: bool) -> None:
    """List sessions, newest first."""

    async def work(host: Host) -> list[dict[str, Any]]:
        from svc_host.sessions import manage

        return manage.views(host, await manage.listed(host, transport))

    views = with_host(work)
    if as_json:
        print_json(views)
        return
    if not views:
        where, option = (f" on {transport!r}", f" --transport {transport}") if transport else ("", "")
        click.echo(f"no sessions{where} yet: `svc session start jupyter -G 1 -t 1:00:00{option} --open` starts one")
        return
    from svc_host.domain.times import clock

    rows = [
        [
            view["job_id"],
            view["cluster"],
            view["kind"],
            view["state"] if view["state"] != "ended" else f"ended: {view['end_reason']}",
            clock(view["time_left_seconds"]),
        ]
        for view in views
    ]
    print_table(["id", "cluster", "kind", "state", "time left"], rows)


@session.command()
@click.argument("job_id")
@transport_option
def stop(job_id: str, transport: str) -> None:
    """Stop a session (its job is cancelled)."""
    check_job_id(job_id)

    async def work(host: Host) -> None:
        from svc_host.sessions import manage

        await manage.stop(host, transport, job_id)

    with_host(work)
    click.echo(f"stopping session {job_id} on {transport!r}: its job is cancelled (`svc session list` shows it end)")
