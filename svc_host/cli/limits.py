"""``svc limits``: the site's job-count limits for the user of one transport, with what each counts now."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from svc_host.cli.options import json_option, transport_option, with_host
from svc_host.cli.output import print_json, print_table

if TYPE_CHECKING:
    from svc_host.host import Host


@click.command()
@transport_option
@json_option
def limits(transport: str, as_json: bool) -> None:
    """Show the limits on how many jobs you may queue and run (svc holds workflow and sweep jobs under them)."""
    from svc_host.services.limits import limits_view

    async def work(host: Host) -> dict[str, Any]:
        return await limits_view(host, transport)

    view = with_host(work)
    if as_json:
        print_json(view)
        return
    rows = [
        [kind, item["name"], item["scope"], item["value"], item["in_queue"]]
        for kind, key in (("submit", "submit_limits"), ("run", "run_limits"))
        for item in view[key]
    ]
    title = (
        f"{view['user']} on {view['cluster'] or view['transport']}: account {view['account']}, "
        f"default QOS {view['default_qos']}, MaxArraySize {view['max_array_size']}"
    )
    print_table(["kind", "limit", "of", "value", "in queue"], rows, title=title)
    if view["waiting_submissions"]:
        click.echo(f"{view['waiting_submissions']} run(s) wait for room to submit")
