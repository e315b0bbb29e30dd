"""``svc sync``, ``svc inspect`` and ``svc files ls|cat``: one mount of an SSH profile (the current one by default).

The profile is chosen like the server chooses it: ``--transport``, else ``SVC_SSH_PROFILE`` /
``SVC_SSH_HOSTNAME``, else the current profile (``svc profile use``). ``svc files`` reads the mount's local
directory under the same boundary rules as ``GET /api/files/browse`` and ``/read``.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from svc_host.cli.options import json_option, with_host
from svc_host.cli.output import print_json, print_table

if TYPE_CHECKING:
    from svc_host.domain.profiles import HostConfig, Mount
    from svc_host.host import Host
    from svc_host.transports.sync_backend import InspectReport, SyncResult

profile_option = click.option(
    "--transport", "-t", metavar="PROFILE", help="SSH profile whose mount to use (default: the current profile)."
)
LIST_LIMIT = 50
"""Paths printed per list in the human output (``--json`` has them all, up to ``--max-paths``)."""


def _choose(config: HostConfig, transport: str | None, mount: str) -> tuple[str, Mount]:
    from svc_host.errors import InvalidRequestError, NotConfiguredError
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.settings.mounts import find_mount, mount_profile

    name = transport or config.current_profile
    if name is None:
        raise NotConfiguredError("no SSH profile is current; pass --transport PROFILE or run `svc profile use PROFILE`")
    spec = get_plugin_manager().transport_specs(config).get(name)
    if spec is not None and not spec.mounts:
        raise InvalidRequestError(f"{name!r} has no mounts; pass an SSH profile with --transport")
    profile = name if spec is None else mount_profile(spec)
    return profile, find_mount(config.profiles, profile, mount)


@click.command()
@click.argument("mount")
@profile_option
@click.option("--delete", is_flag=True, help="Mirror: also delete cluster files missing locally (excludes are spared).")
@click.option("--dry-run", is_flag=True, help="Report what would be sent and deleted, change nothing.")
@click.option(
    "--max-delete",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Refuse a mirror, changing nothing, when more entries (files and directories) would be deleted.",
)
@click.option("--force", is_flag=True, help="Take the mount over when another machine synced it last.")
@click.option(
    "--adopt",
    is_flag=True,
    help="Claim a cluster directory that already holds files svc never synced (needed to mirror).",
)
def sync(
    mount: str, transport: str | None, delete: bool, dry_run: bool, max_delete: int, force: bool, adopt: bool
) -> None:
    """Copy MOUNT's local directory to the cluster (additive unless --delete)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    async def work(host: Host) -> tuple[str, SyncResult]:
        profile, found = _choose(host.transports.config, transport, mount)
        columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed} files"))
        console = Console(stderr=True)
        with Progress(
            *columns, TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal
        ) as bar:
            task = bar.add_task(f"{'checking' if dry_run else 'syncing'} {found.name}", total=None)
            result = await host.sync_backend(profile).sync(
                found,
                dry_run=dry_run,
                delete=delete,
                max_delete=max_delete,
                force=force,
                adopt=adopt,
                progress=lambda sent: bar.update(task, completed=sent),
            )
        return profile, result

    profile, result = with_host(work)
    verb, deleted = ("would send", "would delete") if result.dry_run else ("sent", "deleted")
    summary = f"{verb} {result.files_transferred} file(s)"
    if result.delete:
        summary += f", {deleted} {result.entries_deleted} entr{'y' if result.entries_deleted == 1 else 'ies'}"
    click.echo(f"{'dry run: ' if result.dry_run else ''}mount {result.mount!r} -> {profile}:{result.remote}: {summary}")
    if result.deleted_paths_omitted:
        click.echo(f"  ({result.entries_deleted} paths, too many to list)")
    for path in result.deleted_paths[:LIST_LIMIT]:
        click.echo(f"  {deleted}: {path}")
    if len(result.deleted_paths) > LIST_LIMIT:
        click.echo(f"  ... and {len(result.deleted_paths) - LIST_LIMIT} more")


@click.command()
@click.argument("mount")
@profile_option
@click.option("--max-paths", type=click.IntRange(min=0), default=1000, show_default=True, help="Longest list shown.")
@json_option
def inspect(mount: str, transport: str | None, max_paths: int, as_json: bool) -> None:
    """Show what syncing MOUNT would change, without changing anything (no lock taken)."""

    async def work(host: Host) -> InspectReport:
        profile, found = _choose(host.transports.config, transport, mount)
        return await host.sync_backend(profile).inspect(found, max_paths=max_paths)

    report = with_host(work)
    if as_json:
        print_json(report.model_dump(mode="json"))
        return
    click.echo(f"mount {report.mount!r} of profile {report.profile!r}: {report.local} -> {report.remote}")
    click.echo(f"files that would transfer: {report.files_would_transfer}")
    click.echo(
        f"mirror delete candidates:  {report.mirror_delete_candidates} "
        "(on the cluster, missing locally: job outputs and leftovers alike; review before --delete)"
    )
    _print_paths(report.mirror_delete_candidate_paths, omitted=report.mirror_delete_candidate_paths_omitted)
    if report.stale_uploads_known:
        click.echo(f"stale uploads:             {report.stale_uploads} (uploaded by svc, since deleted locally)")
        _print_paths(report.stale_upload_paths, omitted=report.stale_upload_paths_omitted)
    else:
        click.echo(f"stale uploads:             unknown: {report.stale_uploads_unknown_reason}")
    click.echo(f"excluded:                  {', '.join(report.effective_exclude_patterns)}")


def _print_paths(paths: list[str], *, omitted: bool) -> None:
    if omitted:
        click.echo("  (more than --max-paths; not listed)")
    for path in paths[:LIST_LIMIT]:
        click.echo(f"  {path}")
    if len(paths) > LIST_LIMIT:
        click.echo(f"  ... and {len(paths) - LIST_LIMIT} more (--json lists them all)")


@click.group()
def files() -> None:
    """Look into a mount's local directory (the same boundary rules as the REST API)."""


def _local_mount(transport: str | None, mount: str) -> Mount:
    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.profiles import ProfileStore

    config = ProfileStore(SvcPaths.from_env().profiles_file).host_config(env=os.environ)
    return _choose(config, transport, mount)[1]


@files.command("ls")
@click.argument("mount")
@click.argument("path", default="")
@profile_option
@json_option
def ls(mount: str, path: str, transport: str | None, as_json: bool) -> None:
    """List PATH (a directory relative to MOUNT's root; the root by default)."""
    from svc_host.settings.mounts import MAX_BROWSE_ENTRIES, list_directory

    listing = list_directory(_local_mount(transport, mount), path)
    if listing.truncated:
        click.echo(f"note: only {MAX_BROWSE_ENTRIES} entries of the directory were read; it holds more", err=True)
    if as_json:
        print_json([entry.as_json() for entry in listing.entries])
        return
    rows: list[list[object]] = []
    for entry in listing.entries:
        if entry.type == "symlink":
            note = f"-> {entry.target_kind}" if entry.accessible else "-> (outside the mount or dangling)"
            rows.append(["link", "", f"{entry.name} {note}"])
        elif entry.type == "directory":
            rows.append(["dir", "", f"{entry.name}/"])
        else:
            rows.append(["file", entry.size, entry.name])
    print_table(["type", "size", "name"], rows)


@files.command("cat")
@click.argument("mount")
@click.argument("path")
@profile_option
def cat(mount: str, path: str, transport: str | None) -> None:
    """Print the file PATH (relative to MOUNT's root) as it is."""
    from svc_host.settings.mounts import read_file

    sys.stdout.buffer.write(read_file(_local_mount(transport, mount), path, limit=None))
    sys.stdout.flush()
