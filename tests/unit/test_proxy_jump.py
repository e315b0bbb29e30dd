"""``proxy_jump`` holds jump hosts and nothing ssh or a shell could read as more (profile model, every interface)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from svc_host.domain.profiles import MAX_JUMP_HOPS, SSHProfile

ACCEPTED = [
    "",
    "bastion",
    "bastion.example.org",
    "ada@bastion.example.org",
    "ada@bastion.example.org:2222",
    "jump_1",
    "first.example.org,ada@second:2200,third",
    "[::1]",
    "svcdev@[fe80::1]:2222",
    "192.168.1.1:22",
    ",".join(["h"] * MAX_JUMP_HOPS),
]
REFUSED = [
    "-oProxyCommand=touch /tmp/pwned",
    "-J",
    "bastion -oProxyCommand=x",
    "bastion;touch x",
    "$(touch x)",
    "`id`",
    "bastion'",
    'bastion"',
    "host\nProxyCommand x",
    "host\0",
    "ssh://ada@bastion:22",
    "ada@-oProxyCommand=x",
    "-ada@bastion",
    "bastion:0",
    "bastion:65536",
    "bastion:22x",
    "bastion:",
    "@bastion",
    "a@b@c",
    "bastion,",
    ",bastion",
    "bastion,,gateway",
    "%h",
    "[::1;id]",
    "bastion|id",
    "b" * 254,
    ",".join(["h"] * (MAX_JUMP_HOPS + 1)),
]


@pytest.mark.parametrize("value", ACCEPTED)
def test_jump_specs_are_accepted_as_given(value: str) -> None:
    assert SSHProfile(hostname="h", proxy_jump=value).proxy_jump == value


@pytest.mark.parametrize("value", REFUSED, ids=[repr(value)[:30] for value in REFUSED])
def test_anything_else_is_refused_with_the_form_it_takes(value: str) -> None:
    with pytest.raises(ValidationError, match=r"proxy_jump") as caught:
        SSHProfile(hostname="h", proxy_jump=value)
    assert "[user@]host[:port]" in str(caught.value) or "at most" in str(caught.value)
