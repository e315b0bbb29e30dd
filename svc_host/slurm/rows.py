"""Reading a Slurm command's output line by line: the non-blank lines, the columns of a delimited format, the fields
of a ``scontrol --oneliner`` record and of one value, each problem a :class:`SlurmParseError` naming the command, the
line number and the line (nothing is dropped silently).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, TypeVar

from svc_host.errors import SlurmParseError
from svc_host.slurm.argv import DELIMITER
from svc_host.slurm.scontrol import split_oneliner

_NO_VALUE: Final = frozenset({"", "N/A", "(NULL)", "NONE", "NONE ASSIGNED", "UNKNOWN"})
_T = TypeVar("_T")


def nonblank_lines(stdout: str) -> Iterator[tuple[int, str]]:
    # Not str.splitlines: it also breaks on U+2028, U+0085 and friends, which job names may hold.
    for number, raw_line in enumerate(stdout.split("\n"), start=1):
        line = raw_line.removesuffix("\r")
        if line.strip():
            yield number, line


def delimited_rows(command: str, stdout: str, names: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, {name: value})`` of each non-blank line of ``--parsable2``-style output (``squeue``
    ``--Format`` with :data:`DELIMITER`, ``sacctmgr -P``); a line with too few columns is a
    :class:`SlurmParseError` naming ``command`` and the line, and the last column keeps any further ``|``."""
    for number, line in nonblank_lines(stdout):
        yield number, columns(command, number, line, names)


def line_error(command: str, number: int, line: str, problem: str) -> SlurmParseError:
    return SlurmParseError(f"unexpected {command} output on line {number} ({problem}): {line!r}")


def columns(command: str, number: int, line: str, names: Sequence[str]) -> dict[str, str]:
    values = line.split(DELIMITER, maxsplit=len(names) - 1)
    if len(values) != len(names):
        problem = f"expected {len(names)} {DELIMITER!r}-separated columns, got {len(values)}"
        raise line_error(command, number, line, problem)
    return dict(zip(names, values, strict=True))


def oneliner_record(command: str, number: int, line: str, first_key: str) -> Mapping[str, str]:
    fields = split_oneliner(line)
    if not fields.get(first_key):
        raise line_error(command, number, line, f"no {first_key}=")
    return fields


def text_or_none(value: str) -> str | None:
    value = value.strip()
    return None if value.upper() in _NO_VALUE else value


def whole_number(command: str, number: int, line: str, value: str) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not value.isdigit():
        raise line_error(command, number, line, f"{value!r} is not a whole number")
    return int(value)


def parsed_field(command: str, number: int, line: str, parse: Callable[[str], _T], value: str) -> _T:
    try:
        return parse(value)
    except SlurmParseError as error:
        raise line_error(command, number, line, str(error)) from None
