"""Parse rsync's itemized output (``--itemize-changes`` with svc's ``--out-format``) into paths (pure).

svc runs rsync with ``--out-format='svc-item %i|%n'`` and ``-8``: every item is one line
``svc-item <flags>|<name>`` where ``<flags>`` is the itemize string (``<f+++++++++``, ``cd+++++++++``,
``*deleting  ``, or ``.f         `` for an unchanged item under ``-ii``) and ``<name>`` the path relative
to the transfer root, directories with a trailing ``/``. rsync escapes bytes it will not print (control
characters such as a newline, and a literal ``\\#`` followed by three digits) as ``\\#ooo`` (octal);
everything else, spaces and UTF-8 included, is printed as is. Lines without the prefix (``created
directory ...``, warnings) are not items and are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

OUT_FORMAT = "svc-item %i|%n"
PREFIX = b"svc-item "
_ESCAPE = re.compile(rb"\\#([0-7]{3})")
ROOT = "./"


@dataclass(frozen=True)
class Item:
    """One itemized entry: rsync's change flags and the relative path (``dir/`` for directories)."""

    flags: str
    path: str

    @property
    def deleted(self) -> bool:
        """The receiver deletes (or, on a dry run, would delete) this entry."""
        return self.flags.startswith("*deleting")

    @property
    def is_dir(self) -> bool:
        # %n ends directories with "/", and a name can never contain one.
        return self.path.endswith("/")

    @property
    def transferred(self) -> bool:
        """A non-directory entry sent (``<``/``>``) or created (``c``: symlinks, devices) on the receiver."""
        return not self.deleted and not self.is_dir and self.flags[:1] in ("<", ">", "c")


def decode_name(raw: bytes) -> str:
    """A name as printed by rsync ``-8`` back to text: ``\\#ooo`` escapes undone, invalid UTF-8 replaced."""
    return _ESCAPE.sub(lambda m: bytes([int(m.group(1), 8)]), raw).decode("utf-8", errors="replace")


def parse_line(line: bytes) -> Item | None:
    """The item on one output line (without or with its ``\\n``), or None for a line that is not an item."""
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        # rsync never emits CR itself (it escapes it inside names), so a trailing one is line noise.
        line = line[:-1]
    if not line.startswith(PREFIX):
        return None
    flags, sep, name = line[len(PREFIX) :].partition(b"|")
    if not sep or not name:
        return None
    return Item(flags.decode("ascii", errors="replace"), decode_name(name))


@dataclass
class Summary:
    """Items of one rsync run, split the way svc reports them (paths in rsync's output order)."""

    transferred: list[str] = field(default_factory=list)
    """Non-directory entries sent or created."""
    deleted: list[str] = field(default_factory=list)
    """Entries deleted (or that would be), files and directories; a directory with two files gives three."""
    listed: list[str] = field(default_factory=list)
    """Every entry of the source tree rsync considered (needs ``-ii``), except the root ``./``."""

    def add(self, item: Item) -> None:
        if item.deleted:
            self.deleted.append(item.path)
            return
        if item.path == ROOT:
            return
        self.listed.append(item.path)
        if item.transferred:
            self.transferred.append(item.path)

    def finish(self) -> None:
        """Count directories replaced by a non-directory of the same name as deleted.

        rsync itemizes the contents of such a directory as ``*deleting`` but not the directory itself
        (it reports the new file instead); it is gone all the same, and ``max_delete`` counts it.
        """
        gone = set(self.deleted)
        nondirs = {path for path in self.listed if not path.endswith("/")}
        for path in list(self.deleted):
            parts = path.rstrip("/").split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                ancestor = "/".join(parts[:depth])
                if ancestor in nondirs and f"{ancestor}/" not in gone:
                    gone.add(f"{ancestor}/")
                    self.deleted.append(f"{ancestor}/")


def summarize(lines: Iterable[bytes]) -> Summary:
    """The summary of a whole output."""
    summary = Summary()
    for line in lines:
        item = parse_line(line)
        if item is not None:
            summary.add(item)
    summary.finish()
    return summary
