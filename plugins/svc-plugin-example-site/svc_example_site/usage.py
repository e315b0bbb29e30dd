"""The site account's fair-share standing (``sshare``): parsed purely, fetched through the site transport. What the
MCP tool, the REST route and ``svc site`` all answer, from the host each of them is given."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_host.plugin import NotFoundError, PluginError, SlurmTransport

from svc_example_site.settings import NAME, SiteSettings

if TYPE_CHECKING:
    from svc_host.plugin import PluginHost

FIELDS = ("account", "user", "raw_shares", "raw_usage", "fair_share")


def parse_sshare(text: str) -> list[dict[str, Any]]:
    """Rows of ``sshare -h -P -o Account,User,RawShares,RawUsage,FairShare`` (numbers as numbers, "" as None)."""
    rows = []
    for line in text.splitlines():
        values = line.split("|")
        if len(values) != len(FIELDS):
            continue
        row: dict[str, Any] = dict(zip(FIELDS, (v.strip() for v in values), strict=True))
        row["raw_shares"] = int(row["raw_shares"]) if row["raw_shares"].isdigit() else None
        row["raw_usage"] = int(row["raw_usage"]) if row["raw_usage"].isdigit() else None
        row["fair_share"] = float(row["fair_share"]) if row["fair_share"] else None
        row["user"] = row["user"] or None
        rows.append(row)
    return rows


async def account_usage(account: str, transport: SlurmTransport) -> dict[str, Any]:
    """``{account, rows}``; an account Slurm does not know is a ``NotFoundError``."""
    argv = ["sshare", "-h", "-P", "-A", account, "-o", "Account,User,RawShares,RawUsage,FairShare"]
    rows = parse_sshare(await transport.check(argv))
    if not rows:
        raise NotFoundError(f"Slurm has no account {account!r} (set plugins.site.account to one sshare knows)")
    return {"account": account, "rows": rows}


async def site_usage(host: PluginHost) -> dict[str, Any]:
    """The standing of the account ``host``'s ``plugins.site`` names, through ``host``'s ``site`` transport; a
    ``ConfigError`` saying what to set while the site is not configured, before anything connects."""
    account = host.plugin_settings(NAME, SiteSettings).charged_account
    transport = host.transport("site")
    if not isinstance(transport, SlurmTransport):
        raise PluginError("transport 'site' is not the example site's (is another plugin offering that name?)")
    return await account_usage(account, transport)
