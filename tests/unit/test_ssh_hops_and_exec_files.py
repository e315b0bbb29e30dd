"""Pure parts of the SSH plugin: ProxyJump chains into hops, and the answers of the sftp-less file commands."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from svc_host.transports.ssh_exec_files import (
    MISSING,
    parse_own_file,
    parse_read_range,
    read_range_argv,
)
from svc_plugin_ssh.options import Hop, jump_hops


def test_a_chain_becomes_hops_in_order() -> None:
    assert jump_hops("alice@bastion:2222, ssh://gw ,none") == [Hop("alice", "bastion", 2222), Hop(None, "gw", None)]
    assert jump_hops("none") == []
    assert Hop("alice", "bastion", 2222).label == "alice@bastion:2222"
    with pytest.raises(ValueError, match="port 'x' is not a number"):
        jump_hops("bastion:x")


def test_the_range_read_is_byte_exact_and_path_is_data(tmp_path: Path) -> None:
    """The script run locally: a path with spaces, quotes and a leading dash, a slice cut inside a character."""
    path = tmp_path / "-a 'b' $(c)"
    data = "ünïcode ✓\n".encode() * 10
    path.write_bytes(data)
    out = subprocess.run(read_range_argv(str(path), 3, 7), capture_output=True, check=True).stdout
    assert parse_read_range(out) == (data[3:10], len(data))
    missing = subprocess.run(read_range_argv(str(tmp_path / "none"), 0, 5), capture_output=True, check=False)
    assert missing.returncode == MISSING


def test_the_facts_line_of_an_own_file() -> None:
    facts, data = parse_own_file(b'f 1001 9\n{"a": 1}\n')
    assert (stat.S_ISREG(facts.mode), facts.uid, facts.size, data) == (True, 1001, 9, b'{"a": 1}\n')
    assert stat.S_ISLNK(parse_own_file(b"l 1001 12\n")[0].mode)
    with pytest.raises(ValueError, match="no facts line"):
        parse_own_file(b"garbage")
