"""Printing for the CLI: rich tables for people, ``--json`` for scripts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str, ensure_ascii=False))


def import_tables_meanwhile() -> None:
    """Import the table printer in a thread while the command waits on the agent or the cluster: it costs
    tens of milliseconds that would otherwise come after the answer. (Not a daemon: an interpreter exiting
    while a daemon thread imports is not safe.)"""
    import threading

    threading.Thread(target=_import_rich, name="svc-import-rich").start()


def _import_rich() -> None:
    import rich.console
    import rich.table  # noqa: F401


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    Console().print(table)
