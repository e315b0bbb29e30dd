"""Build the rsync and ssh argv for a profile and a mount (pure).

rsync starts ``ssh`` from the ``-e`` string, which it splits itself (on spaces, honouring single and
double quotes); ``shlex.join`` output survives that split unchanged. Paths on the remote side travel
through ``-s`` (``--secluded-args``, formerly ``--protect-args``), i.e. inside rsync's protocol, so the
remote shell never sees them: no word splitting, no globbing, no ``$(...)``.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence

from svc_host.plugin import SSHProfile, SyncError, check_proxy_jump, cluster_root
from svc_plugin_rsync.excludes import filter_args
from svc_plugin_rsync.itemize import OUT_FORMAT

CONNECT_TIMEOUT = 15
IO_TIMEOUT = 300
_BAD_HOST = re.compile(r"[\s\0]")


def remote_dir(remote: str) -> str:
    """``mount.remote`` as rsync and SFTP take it (see ``svc_host.domain.profiles.cluster_root``)."""
    try:
        return cluster_root(remote)
    except ValueError as exc:
        raise SyncError(str(exc)) from None


def _config_value(value: str) -> str:
    """A path as an ssh ``-o`` value: double-quoted (spaces, quotes) with ``%`` doubled (ssh expands %-tokens).

    ``-o IdentityFile=`` rather than ``-i``: ssh checks an ``-i`` path before expanding its %-tokens, so
    a path holding ``%`` cannot be given there at all.
    """
    if '"' in value or "\\" in value:
        raise SyncError(f"path {value!r} contains a double quote or backslash, which ssh options cannot carry")
    return '"' + value.replace("%", "%%") + '"'


def _check_word(what: str, value: str) -> str:
    if not value or value.startswith("-") or _BAD_HOST.search(value):
        raise SyncError(f"SSH {what} {value!r} is invalid: no spaces and no leading '-'")
    return value


def _jump(value: str) -> str:
    """The jump hosts checked again here: a profile built without validation must not reach ssh either."""
    try:
        return check_proxy_jump(value)
    except ValueError as exc:
        raise SyncError(f"SSH {exc}") from None


DEFAULT_KEY_NAMES = ("id_ed25519_sk", "id_ecdsa_sk", "id_ed448", "id_ed25519", "id_ecdsa", "id_rsa", "id_dsa")
"""The keys asyncssh tries from ``$HOME/.ssh`` when a profile names none (its order)."""


def ssh_argv(profile: SSHProfile) -> list[str]:
    """The ssh command (without the host) that reaches the profile's login node non-interactively.

    Mirrors the ssh plugin's connection options (``svc_plugin_ssh.options``): ``ssh_host`` is an alias from
    ``~/.ssh/config`` and explicit fields override it; unknown host keys are rejected unless ``accept_unknown_host``.
    OpenSSH reads ``~/.ssh`` of the passwd entry while asyncssh reads ``$HOME/.ssh``; they differ under
    services, containers and sudo. So the config file, the known_hosts file and (when the profile names no
    key) the default keys are passed explicitly from ``$HOME/.ssh``: both trust the same hosts and keys.
    """
    ssh_dir = os.path.join(os.path.expanduser("~"), ".ssh")
    config = os.path.join(ssh_dir, "config")
    argv = [
        "ssh",
        "-F", config if os.path.isfile(config) else "/dev/null",  # a path argument, taken as it is
        "-o", "BatchMode=yes",
        "-o", f"ConnectTimeout={CONNECT_TIMEOUT}",
        "-o", "ServerAliveInterval=30",
        "-o", "ServerAliveCountMax=3",
    ]  # fmt: skip
    if profile.ssh_host and profile.hostname:
        argv += ["-o", f"HostName={_check_word('hostname', profile.hostname)}"]
    if profile.username:
        argv += ["-l", _check_word("username", profile.username)]
    if profile.port != 22 or not profile.ssh_host:
        argv += ["-p", str(profile.port)]
    if profile.key_filename:
        argv += ["-o", f"IdentityFile={_config_value(os.path.expanduser(profile.key_filename))}"]
        argv += ["-o", "IdentitiesOnly=yes"]
    elif not profile.ssh_host:  # an alias's keys come from the config file, read by both
        for name in DEFAULT_KEY_NAMES:
            key = os.path.join(ssh_dir, name)
            if os.path.isfile(key):
                argv += ["-o", f"IdentityFile={_config_value(key)}"]
    if profile.proxy_jump:
        argv += ["-o", f"ProxyJump={_jump(profile.proxy_jump)}"]  # one word: never read as an option
    if profile.accept_unknown_host:
        argv += ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
    else:
        if profile.known_hosts:
            argv += ["-o", f"UserKnownHostsFile={_config_value(os.path.expanduser(profile.known_hosts))}"]
        elif not profile.ssh_host:  # an alias may name its own file in the config, read by both
            known = os.path.join(ssh_dir, "known_hosts")
            argv += ["-o", f"UserKnownHostsFile={_config_value(known)}"]
        argv += ["-o", "StrictHostKeyChecking=yes"]
    return argv


def destination(profile: SSHProfile, remote: str) -> str:
    """rsync's ``host:dir/`` for ``remote`` (IPv6 literals bracketed; the user goes to ssh as ``-l``)."""
    host = _check_word("host", profile.ssh_host or profile.hostname)
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{remote_dir(remote)}/"


def rsync_argv(
    profile: SSHProfile,
    local: str,
    remote: str,
    *,
    excludes: Sequence[str],
    dry_run: bool,
    delete: bool,
    max_delete: int | None = None,
    rsync: str = "rsync",
    remote_rsync: str = "rsync",
) -> list[str]:
    """rsync copying the contents of directory ``local`` into ``remote``, itemizing every entry.

    ``-ii`` lists unchanged entries too (the upload record needs the whole tree); ``-8`` prints UTF-8
    names as they are. ``max_delete`` is passed to rsync as a last guard against a tree that grew
    between svc's own preflight and the real run.
    """
    argv = [
        rsync,
        "--recursive", "--links", "--perms", "--times",
        "-s",  # --secluded-args, named --protect-args in older rsync; the short form works with both
        "--8-bit-output",
        "--itemize-changes", "--itemize-changes",
        f"--out-format={OUT_FORMAT}",
        f"--timeout={IO_TIMEOUT}",
        "-e", shlex.join(ssh_argv(profile)),
    ]  # fmt: skip
    if remote_rsync != "rsync":
        argv.append(f"--rsync-path={remote_rsync}")
    if dry_run:
        argv.append("--dry-run")
    if delete:
        argv.append("--delete")
        if max_delete is not None:
            argv.append(f"--max-delete={max_delete}")
    argv += filter_args(excludes)
    argv += [os.path.join(os.path.abspath(local), ""), destination(profile, remote)]
    return argv
