"""rsync and ssh argv built from a profile: quoting that survives rsync's own split of ``-e``."""

from __future__ import annotations

import itertools
import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_host.domain.profiles import SSHProfile
from svc_host.errors import SyncError
from svc_host.plugin import DEFAULT_EXCLUDES
from svc_plugin_rsync.argv import destination, remote_dir, rsync_argv, ssh_argv


def rsync_split(command: str) -> list[str]:
    """rsync's split of the ``-e`` string (main.c ``do_cmd``): spaces separate words; '…' and "…" group,
    adjacent pieces join, and a doubled quote inside a quoted piece is a literal quote."""
    args: list[str] = []
    i, n = 0, len(command)
    while i < n:
        if command[i] == " ":
            i += 1
            continue
        word: list[str] = []
        quote = ""
        while i < n and (command[i] != " " or quote):
            ch = command[i]
            if ch in "'\"":
                if not quote:
                    quote = ch
                    i += 1
                    continue
                if ch == quote:
                    i += 1
                    if i < n and command[i] == quote:
                        word.append(quote)
                        i += 1
                        continue
                    quote = ""
                    continue
            word.append(ch)
            i += 1
        args.append("".join(word))
    return args


PROFILE = SSHProfile(
    hostname="login.example.org",
    username="ada",
    port=2222,
    key_filename="/keys/it's a %d key/id",
    known_hosts="/keys/known hosts",
)


def test_ssh_argv_carries_every_profile_setting() -> None:
    argv = ssh_argv(PROFILE)
    assert argv[0] == "ssh"
    pairs = list(itertools.pairwise(argv))
    assert ("-o", "BatchMode=yes") in pairs
    assert ("-p", "2222") in pairs
    assert ("-l", "ada") in pairs
    assert ("-o", 'IdentityFile="/keys/it\'s a %%d key/id"') in pairs
    assert ("-o", "IdentitiesOnly=yes") in pairs
    assert ("-o", 'UserKnownHostsFile="/keys/known hosts"') in pairs
    assert ("-o", "StrictHostKeyChecking=yes") in pairs
    assert "-J" not in argv


def test_accept_unknown_host_and_proxy_jump() -> None:
    argv = ssh_argv(SSHProfile(hostname="h", accept_unknown_host=True, proxy_jump="bastion.example.org:2200"))
    pairs = list(itertools.pairwise(argv))
    assert ("-o", "StrictHostKeyChecking=no") in pairs
    assert ("-o", "UserKnownHostsFile=/dev/null") in pairs
    assert ("-o", "ProxyJump=bastion.example.org:2200") in pairs
    assert "-J" not in argv
    assert ("-p", "22") in pairs


def test_proxy_jump_is_checked_again_when_the_profile_skipped_validation() -> None:
    unchecked = SSHProfile.model_construct(hostname="h", proxy_jump="-oProxyCommand=touch /tmp/x")
    with pytest.raises(SyncError, match=r"^SSH proxy_jump '-oProxyCommand=touch /tmp/x' is invalid"):
        rsync_argv(unchecked, "/d", "p", excludes=[], dry_run=False, delete=False)


def test_ssh_host_alias_leaves_port_to_ssh_config_and_overrides_hostname() -> None:
    argv = ssh_argv(SSHProfile(ssh_host="cluster", hostname="10.0.0.5"))
    assert "-p" not in argv
    assert "HostName=10.0.0.5" in argv
    assert destination(SSHProfile(ssh_host="cluster", hostname="10.0.0.5"), "proj") == "cluster:proj/"


def test_without_key_or_known_hosts_ssh_reads_the_same_files_as_asyncssh(home: Path) -> None:
    # OpenSSH would read the passwd entry's ~/.ssh; asyncssh reads $HOME/.ssh: name $HOME's files explicitly.
    ssh = home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("key")
    (ssh / "id_rsa").write_text("key")
    pairs = list(itertools.pairwise(ssh_argv(SSHProfile(hostname="h"))))
    assert ("-F", "/dev/null") in pairs  # no config file in $HOME: none at all, as asyncssh
    assert ("-o", f'UserKnownHostsFile="{ssh}/known_hosts"') in pairs
    keys = [value for option, value in pairs if option == "-o" and value.startswith("IdentityFile=")]
    assert keys == [f'IdentityFile="{ssh}/id_ed25519"', f'IdentityFile="{ssh}/id_rsa"']
    assert ("-o", "IdentitiesOnly=yes") not in pairs  # agent keys stay usable, as in asyncssh

    (ssh / "config").write_text("Host cluster\n  HostName 10.0.0.5\n")
    alias = list(itertools.pairwise(ssh_argv(SSHProfile(ssh_host="cluster"))))
    assert ("-F", str(ssh / "config")) in alias
    assert not [value for option, value in alias if option == "-o" and value.startswith(("IdentityFile", "User"))]


def test_e_string_survives_rsyncs_split() -> None:
    argv = rsync_argv(PROFILE, "/src", "proj", excludes=DEFAULT_EXCLUDES, dry_run=False, delete=False)
    e_string = argv[argv.index("-e") + 1]
    assert rsync_split(e_string) == ssh_argv(PROFILE)


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\0"), min_size=0, max_size=12), max_size=6))
def test_shlex_join_round_trips_through_rsyncs_split(words: list[str]) -> None:
    assert rsync_split(shlex.join(words)) == words


def test_rsync_argv_shape() -> None:
    argv = rsync_argv(
        PROFILE, "/data/my project", "~/proj $(x)", excludes=[".git/", "*.pyc"], dry_run=True, delete=True,
        max_delete=7,
    )  # fmt: skip
    assert argv[0] == "rsync"
    assert "-s" in argv  # remote paths travel inside the protocol, never through the remote shell
    assert {"--dry-run", "--delete", "--max-delete=7", "--itemize-changes", "--8-bit-output"} <= set(argv)
    assert argv.count("--itemize-changes") == 2
    assert argv[-2:] == ["/data/my project/", "login.example.org:proj $(x)/"]
    assert [a for a in argv if a.startswith("--filter=")] == ["--filter=- .git/", "--filter=- *.pyc"]
    additive = rsync_argv(PROFILE, "/d", "p", excludes=[], dry_run=False, delete=False, max_delete=7)
    assert not any(a.startswith(("--delete", "--max-delete", "--dry-run")) for a in additive)


def test_custom_rsync_programs() -> None:
    argv = rsync_argv(PROFILE, "/d", "p", excludes=[], dry_run=False, delete=False, rsync="/opt/rsync",
                      remote_rsync="/usr/local/bin/rsync")  # fmt: skip
    assert argv[0] == "/opt/rsync"
    assert "--rsync-path=/usr/local/bin/rsync" in argv


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("~", "."),
        ("~/", "."),
        ("~/proj", "proj"),
        ("proj/", "proj"),
        ("/scratch/ada//proj/", "/scratch/ada/proj"),
        ("-rf", "./-rf"),
        ("~/-x", "./-x"),
        ("a b/$(c)", "a b/$(c)"),
    ],
)
def test_remote_dir(remote: str, expected: str) -> None:
    assert remote_dir(remote) == expected


def test_remote_dir_refuses_other_users_home() -> None:
    with pytest.raises(SyncError, match="~user"):
        remote_dir("~bob/proj")


def test_ipv6_destination_is_bracketed() -> None:
    assert destination(SSHProfile(hostname="::1"), "p") == "[::1]:p/"


@pytest.mark.parametrize(
    "profile",
    [
        SSHProfile(hostname="-oProxyCommand=touch x"),
        SSHProfile(hostname="host name"),
        SSHProfile(hostname="h", username="-l"),
        SSHProfile(hostname="h", key_filename='/keys/"quoted"'),
    ],
)
def test_values_ssh_would_misread_are_refused(profile: SSHProfile) -> None:
    with pytest.raises(SyncError):
        rsync_argv(profile, "/d", "p", excludes=[], dry_run=False, delete=False)
