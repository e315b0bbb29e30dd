"""File access by plain commands, for login nodes whose sshd refuses the ``sftp`` subsystem (pure).

Each operation is one ``sh -c`` command whose script is a constant and whose path and numbers are positional
arguments (``"$1"``), so no path is ever parsed as shell code; the parsers turn the command's bytes into what
the SFTP version returns. Reads are byte-exact: ``stat`` gives the size, ``tail -c +N | head -c L`` the bytes
from offset ``N - 1``, the same slice an SFTP ``seek``/``read`` returns.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass

MISSING = 3
"""Exit status of every script below when the path does not exist."""
UNREADABLE = 4
"""Exit status of the range read when the file exists but this account may not read it."""

_DASHED = 'case $1 in -*) set -- "./$1" "$2" "$3";; esac; '
"""A relative path starting with ``-`` gets ``./`` so no tool takes it for an option."""

READ_RANGE = (
    _DASHED + f'[ -e "$1" ] || exit {MISSING}; [ -r "$1" ] || exit {UNREADABLE}; '
    'stat -L -c %s -- "$1" && tail -c +"$2" -- "$1" | head -c "$3"'
)
LIST_NAMES = (
    _DASHED + f'[ -e "$1" ] || exit {MISSING}; find "$1" -mindepth 1 -maxdepth 1 -printf "%f\\0" | head -z -n "$2"'
)
REAL_PATH = _DASHED + f'[ -e "$1" ] || exit {MISSING}; realpath -e -- "$1"'
OWN_FILE = (
    _DASHED + f'[ -e "$1" ] || [ -L "$1" ] || exit {MISSING}; find "$1" -maxdepth 0 -printf "%y %U %s\\n" || exit 1; '
    '[ ! -L "$1" ] && [ -f "$1" ] && [ -O "$1" ] && [ "$(stat -c %s -- "$1")" -le "$2" ] && head -c "$2" -- "$1"; '
    "exit 0"
)
WRITE_REPLACING = 'set -C; umask 077; if cat > "$1" && mv -f -- "$1" "$2"; then exit 0; fi; rm -f -- "$1"; exit 1'


def _sh(script: str, *args: str) -> list[str]:
    return ["sh", "-c", script, "svc-files", *args]


def read_range_argv(path: str, offset: int, limit: int) -> list[str]:
    """Print the size of ``path`` on a line, then up to ``limit`` bytes from byte ``offset``."""
    return _sh(READ_RANGE, path, str(offset + 1), str(limit))


def parse_read_range(stdout: bytes) -> tuple[bytes, int]:
    """The bytes read and the file's size, from a successful ``read_range_argv`` (``ValueError`` if garbled)."""
    size, newline, data = stdout.partition(b"\n")
    if not newline or not size.strip().isdigit():
        raise ValueError(f"no size line in the answer of the range read: {stdout[:80]!r}")
    return data, int(size)


def list_names_argv(path: str, limit: int) -> list[str]:
    """At most ``limit`` names in directory ``path``, NUL-terminated (``.`` and ``..`` never listed)."""
    return _sh(LIST_NAMES, path, str(limit))


def parse_names(stdout: bytes) -> list[str]:
    return [name.decode(errors="replace") for name in stdout.split(b"\0") if name]


def real_path_argv(path: str) -> list[str]:
    """``path`` with every symlink resolved (``realpath -e``)."""
    return _sh(REAL_PATH, path)


def write_replacing_argv(temp: str, path: str) -> list[str]:
    """Write stdin to the new file ``temp`` (mode 0600, never over an existing file), then rename it to ``path``;
    on failure the temp file is removed."""
    return _sh(WRITE_REPLACING, temp, path)


@dataclass(frozen=True)
class FileFacts:
    """What ``lstat`` says of a file, as far as deciding whether to read it needs."""

    mode: int
    uid: int
    size: int


def own_file_argv(path: str, limit: int) -> list[str]:
    """A line ``TYPE UID SIZE`` of ``path`` (not following a symlink), then its bytes when it is a regular
    file of this account of at most ``limit`` bytes."""
    return _sh(OWN_FILE, path, str(limit))


_TYPES = {"f": stat.S_IFREG, "l": stat.S_IFLNK, "d": stat.S_IFDIR}


def parse_own_file(stdout: bytes) -> tuple[FileFacts, bytes]:
    """The facts line and the bytes that followed it (``ValueError`` if garbled)."""
    line, newline, data = stdout.partition(b"\n")
    fields = line.decode(errors="replace").split()
    if not newline or len(fields) != 3 or not fields[1].isdigit() or not fields[2].isdigit():
        raise ValueError(f"no facts line in the answer of the file read: {stdout[:80]!r}")
    mode = _TYPES.get(fields[0], stat.S_IFSOCK) | 0o600
    return FileFacts(mode=mode, uid=int(fields[1]), size=int(fields[2])), data
