"""``svc profile list|add|use|remove|test`` and ``svc profile mount add|remove``: SSH profiles and their mounts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pydantic import ValidationError

    from svc_host.host import Host
    from svc_host.settings.profiles import ProfileStore


def _store() -> ProfileStore:
    from svc_host.plugin_core.manager import get_plugin_manager
    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.profiles import ProfileStore

    return ProfileStore(
        SvcPaths.from_env().profiles_file, held_names=lambda: get_plugin_manager().held_transport_names()
    )


def _usage_error(exc: ValidationError) -> click.ClickException:
    from svc_host.cli.config import InputError
    from svc_host.domain.validation_words import describe_validation_error

    return InputError(describe_validation_error(exc))


@click.group()
def profile() -> None:
    """Manage SSH profiles (how to reach a cluster) and their mounts."""


@profile.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table (for scripts).")
def list_profiles(as_json: bool) -> None:
    """List profiles; the current one (after SVC_SSH_PROFILE / SVC_SSH_HOSTNAME) is marked '*'."""
    import os

    from svc_host.cli.output import print_json, print_table
    from svc_host.settings.secrets import mask_values

    config = _store().host_config(env=os.environ)
    rows: list[dict[str, Any]] = [
        {
            "name": name,
            "is_current": name == config.current_profile,
            **item.model_dump(mode="json"),
            "env_vars": mask_values(item.env_vars),
        }
        for name, item in sorted(config.profiles.items())
    ]
    if as_json:
        print_json(rows)
        return
    print_table(
        ["", "name", "target", "mounts", "description"],
        [
            [
                "*" if row["is_current"] else "",
                row["name"],
                _target(row),
                ", ".join(f"{m['name']} ({m['local']} -> {m['remote']})" for m in row["mounts"]),
                row["description"],
            ]
            for row in rows
        ],
    )


def _target(row: dict[str, Any]) -> str:
    host = row["ssh_host"] or row["hostname"]
    user = f"{row['username']}@" if row["username"] else ""
    return f"{user}{host}:{row['port']}" + (f" via {row['proxy_jump']}" if row["proxy_jump"] else "")


@profile.command()
@click.argument("name")
@click.option("--hostname", help="Login node to connect to (required unless --ssh-host is given).")
@click.option("--username", help="Remote user name.")
@click.option("--key", "key_filename", help="Path to the private key (stored as given; ~ is expanded when used).")
@click.option("--port", type=int, default=22, show_default=True)
@click.option("--ssh-host", help="Host alias from ~/.ssh/config.")
@click.option("--proxy-jump", help="Jump host, e.g. user@bastion.")
@click.option("--known-hosts", help="known_hosts file to check the host key against.")
@click.option(
    "--max-channels",
    type=int,
    help="SSH channels open at once on the profile's connection, more wait (default 8; keep it below the sshd's "
    "MaxSessions, 10 unless the site changed it).",
)
@click.option("--description", default="", help="What this profile is for.")
def add(
    name: str,
    *,
    hostname: str | None,
    username: str | None,
    key_filename: str | None,
    port: int,
    ssh_host: str | None,
    proxy_jump: str | None,
    known_hosts: str | None,
    max_channels: int | None,
    description: str,
) -> None:
    """Add the SSH profile NAME."""
    from pydantic import ValidationError

    from svc_host.domain.profiles import SSHProfile

    try:
        new = SSHProfile(
            hostname=hostname or "",
            username=username or "",
            key_filename=key_filename or "",
            port=port,
            description=description,
            ssh_host=ssh_host,
            proxy_jump=proxy_jump,
            known_hosts=known_hosts,
            **({} if max_channels is None else {"max_channels": max_channels}),
        )
    except ValidationError as exc:
        raise _usage_error(exc) from None
    _store().create(name, new)
    click.echo(f"added profile {name!r}; make it current with: svc profile use {name}")


@profile.command()
@click.argument("name")
def use(name: str) -> None:
    """Make NAME the current profile."""
    import os

    _store().activate(name)
    click.echo(f"current profile: {name}")
    for variable in ("SVC_SSH_PROFILE", "SVC_SSH_HOSTNAME"):
        if os.environ.get(variable):
            click.echo(f"note: {variable} is set in this shell and takes precedence", err=True)


@profile.command()
@click.argument("name")
def remove(name: str) -> None:
    """Remove the profile NAME and its mounts (local files are left alone)."""
    store = _store()
    mounts = len(store.get(name).mounts)
    store.delete(name)
    click.echo(f"removed profile {name!r} and its {mounts} mount(s)")


@profile.command("test")
@click.argument("name")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True, help="Seconds in all.")
def test_profile(name: str, timeout: float) -> None:
    """Connect to profile NAME over SSH and run sinfo; say in one line what works or what is wrong."""
    import asyncio

    from svc_host.cli.options import with_host
    from svc_host.errors import NotFoundError, TransportError

    async def work(host: Host) -> str | None:
        profiles = host.transports.config.profiles
        if name not in profiles:
            known = ", ".join(sorted(profiles)) or "none"
            raise NotFoundError(f"SSH profile {name!r} not found; known profiles: {known}")
        try:
            snapshots = await asyncio.wait_for(host.transport(name).resources(), timeout)
        except TimeoutError:
            click.echo(
                f"timeout: no answer from {name!r} within {timeout:g}s; check host, port and proxy_jump", err=True
            )
            return None
        except TransportError as exc:
            click.echo(_diagnosis(name, exc), err=True)
            return None
        return ", ".join(snapshot.partition for snapshot in snapshots) or "none"

    partitions = with_host(work)
    if partitions is None:
        raise SystemExit(1)
    click.echo(f"ok: {name!r} answers; sinfo lists partitions: {partitions}")


def _diagnosis(name: str, exc: Exception) -> str:
    """One line for a failed ``svc profile test``: the SSH transport's own messages name host key and key problems."""
    from svc_host.errors import TransportError

    message = next((line.strip() for line in str(exc).splitlines() if line.strip()), "failed without a message")
    if isinstance(exc, TransportError) and exc.exit_code == 127:
        return f"no sinfo: the login node of {name!r} has no `sinfo` on the PATH of a non-interactive shell"
    if isinstance(exc.__cause__, TimeoutError):
        return f"timeout: {message}"
    return message


@profile.group()
def mount() -> None:
    """Manage a profile's mounts (a local directory and its directory on the cluster)."""


@mount.command("add")
@click.argument("profile_name", metavar="PROFILE")
@click.argument("name")
@click.argument("local")
@click.argument("remote")
@click.option(
    "--exclude",
    "excludes",
    multiple=True,
    metavar="PATTERN",
    help="An rsync pattern syncs never upload nor delete (repeat it: --exclude data/ --exclude '*.ckpt').",
)
def mount_add(profile_name: str, name: str, local: str, remote: str, excludes: tuple[str, ...]) -> None:
    """Add mount NAME to PROFILE: the existing directory LOCAL is kept in sync with REMOTE."""
    from pathlib import Path

    from pydantic import ValidationError

    from svc_host.domain.profiles import Mount

    local_path = Path(local).expanduser()
    try:
        new = Mount(name=name, local=str(local_path.absolute()), remote=remote, exclude=list(excludes))
    except ValidationError as exc:
        raise _usage_error(exc) from None
    added = _store().add_mount(profile_name, new)
    click.echo(f"added mount {name!r} to profile {profile_name!r}: {added.local} -> {added.remote}")


@mount.command("exclude")
@click.argument("profile_name", metavar="PROFILE")
@click.argument("name")
@click.argument("patterns", nargs=-1, metavar="[PATTERN]...")
def mount_exclude(profile_name: str, name: str, patterns: tuple[str, ...]) -> None:
    """Replace the exclude patterns of mount NAME (none given: clear them). The next inspect reports the changed
    filter, and the next sync starts a new upload record."""
    from pydantic import ValidationError

    try:
        changed = _store().set_mount_exclude(profile_name, name, list(patterns))
    except ValidationError as exc:
        raise _usage_error(exc) from None
    shown = ", ".join(changed.exclude) or "none"
    click.echo(f"mount {name!r} of profile {profile_name!r} excludes: {shown}")


@mount.command("remove")
@click.argument("profile_name", metavar="PROFILE")
@click.argument("name")
def mount_remove(profile_name: str, name: str) -> None:
    """Remove mount NAME from PROFILE (local files are left alone)."""
    _store().remove_mount(profile_name, name)
    click.echo(f"removed mount {name!r} from profile {profile_name!r}")
