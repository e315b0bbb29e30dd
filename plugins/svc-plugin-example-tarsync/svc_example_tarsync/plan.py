"""What a sync must send and delete, from the local tree and the remote listing (pure but for reading the local
tree): rsync's quick check (size and whole-second modification time) and its exclude rules (``is_excluded``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from svc_host.plugin import is_excluded


@dataclass(frozen=True)
class Entry:
    """A file (``f``), directory (``d``) or symlink (``l``) with its size and modification time in seconds."""

    kind: str
    size: int = 0
    mtime: int = 0


Tree = dict[str, Entry]
"""Relative path (``/`` separated, no trailing slash) to entry."""


def local_tree(root: Path, excludes: list[str]) -> Tree:
    """Every entry under ``root`` that ``excludes`` does not skip; an excluded directory is not entered."""
    tree: Tree = {}
    pending = [""]
    while pending:
        prefix = pending.pop()
        with os.scandir(root / prefix if prefix else root) as entries:
            for item in entries:
                relative = f"{prefix}{item.name}"
                is_dir = item.is_dir(follow_symlinks=False)
                if is_excluded(relative, is_dir=is_dir, patterns=excludes):
                    continue
                facts = item.stat(follow_symlinks=False)
                kind = "d" if is_dir else "l" if item.is_symlink() else "f"
                tree[relative] = Entry(kind, facts.st_size if kind == "f" else 0, int(facts.st_mtime))
                if is_dir:
                    pending.append(relative + "/")
    return tree


def parse_listing(stdout: bytes) -> Tree:
    """The remote tree from ``find DIR -mindepth 1 -printf '%y %s %T@ %P\\0'``."""
    tree: Tree = {}
    for record in stdout.split(b"\0"):
        if not record:
            continue
        kind, size, mtime, name = record.decode(errors="surrogateescape").split(" ", 3)
        tree[name] = Entry(kind if kind in ("d", "l") else "f", int(size) if kind == "f" else 0, int(float(mtime)))
    return tree


def shown(path: str, entry: Entry) -> str:
    """A path as svc reports it: directories end in ``/``."""
    return f"{path}/" if entry.kind == "d" else path


@dataclass
class Plan:
    send: list[str] = field(default_factory=list)
    """Local entries to put in the tar stream (new or changed files and symlinks, new directories)."""
    delete: list[str] = field(default_factory=list)
    """Remote entries a mirror deletes, as reported (directories end in ``/``)."""
    listed: list[str] = field(default_factory=list)
    """Every local entry not excluded, as reported: what the upload record adds."""

    @property
    def transferred(self) -> list[str]:
        return [path for path in self.send if not path.endswith("/")]


def plan(local: Tree, remote: Tree, *, delete: bool, excludes: list[str]) -> Plan:
    """What makes ``remote`` hold ``local`` (and, with ``delete``, nothing more than it but excluded paths)."""
    result = Plan(listed=sorted(shown(path, entry) for path, entry in local.items()))
    for path, entry in sorted(local.items()):
        there = remote.get(path)
        if entry.kind == "d":
            if there is None or there.kind != "d":
                result.send.append(path + "/")
        elif there is None or (there.kind, there.size, there.mtime) != (entry.kind, entry.size, entry.mtime):
            result.send.append(path)
    if delete:
        kept = {
            path for path, entry in remote.items() if is_excluded(path, is_dir=entry.kind == "d", patterns=excludes)
        }
        for path, entry in sorted(remote.items()):
            mine = local.get(path)
            if path in kept or (mine is not None and (mine.kind == "d") == (entry.kind == "d")):
                continue
            if entry.kind == "d" and any(other.startswith(path + "/") for other in kept):
                continue  # rsync leaves a directory holding excluded entries
            result.delete.append(shown(path, entry))
    return result
