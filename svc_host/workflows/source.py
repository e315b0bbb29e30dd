"""YAML text to plain data, with the line of every key and item so that problems can say where they are.

Only YAML's safe subset is read (no tags that build objects). Duplicate keys in a mapping are problems
(YAML would silently keep the last one). Loading is bounded, so no document can exhaust the server: control
characters are refused with their line, nesting deeper than :data:`MAX_DEPTH` levels is refused while
composing (before Python's recursion limit could be reached), and aliases are followed with a budget: an
alias inside itself (``&a [*a]``), more than :data:`MAX_NODES` nodes or :data:`MAX_EXPANDED_CHARS` characters
of scalars once aliases are expanded ("billion laughs"), or nesting past :data:`MAX_DEPTH` through aliases
make the document fatal.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

Path = tuple[str | int, ...]
MAX_NODES = 200_000
MAX_DEPTH = 50
"""Nesting levels of mappings and sequences (a workflow needs about six)."""
MAX_EXPANDED_CHARS = 8 * 1024 * 1024
"""Characters of all scalars together once aliases are expanded."""
_NOT_YAML = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters YAML 1.1 does not allow in a stream (PyYAML's reader refuses them, without a line)."""


@dataclass(frozen=True)
class Parsed:
    """A parsed document and where its parts are (1-based lines)."""

    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    fatal: bool = False
    """True when ``data`` could not be built at all (``problems`` says why)."""

    def line(self, path: Path) -> int | None:
        """The line of ``path``, or of its nearest ancestor the document has."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None

    def where(self, path: Path) -> str:
        """``line 7: jobs[1].retry`` (or just the dotted path when the line is unknown)."""
        shown = dotted(path)
        line = self.line(path)
        if line is None:
            return shown
        return f"line {line}: {shown}" if shown else f"line {line}"


class YamlSyntaxError(ValueError):
    """The text is not YAML; the message says where."""


def dotted(path: Path) -> str:
    """``("jobs", 1, "retry")`` -> ``jobs[1].retry``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def parse(text: str) -> Parsed:
    """Parse one YAML document (an empty one is ``None``).

    Raises:
        YamlSyntaxError: the text is not valid YAML, or holds more than one document.
    """
    bad = _NOT_YAML.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        raise YamlSyntaxError(
            f"line {line}, column {column}: character U+{ord(bad.group()):04X} is not allowed in YAML "
            "(control characters and NUL cannot appear; write them as escapes in a double-quoted string)"
        )
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Parsed(data=None)
        walk = _Walk()
        walk.visit(node, (), frozenset())
        if walk.fatal is not None:
            return Parsed(data=None, lines=walk.lines, problems=[walk.fatal], fatal=True)
        data = _plain(loader.construct_document(node))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlSyntaxError(f"{where}YAML syntax error: {problem}") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"YAML syntax error: {exc}") from None
    finally:
        loader.dispose()
    return Parsed(data=data, lines=walk.lines, problems=walk.problems)


class _TooDeep(yaml.MarkedYAMLError):
    """Raised while composing, before the composer's recursion can hit Python's limit."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing nesting deeper than :data:`MAX_DEPTH` levels as it composes."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooDeep(
                    problem=f"the document is nested more than {MAX_DEPTH} levels deep",
                    problem_mark=self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Walk:
    """Records the line of every path and duplicate keys; follows aliases within the budgets."""

    def __init__(self) -> None:
        self.lines: dict[Path, int] = {}
        self.problems: list[str] = []
        self.count = 0
        self.chars = 0
        self.fatal: str | None = None

    def visit(self, node: yaml.Node, path: Path, ancestors: frozenset[int]) -> None:
        if self.fatal is not None:
            return
        self.count += 1
        if self.count > MAX_NODES:
            self.fatal = f"the document expands to more than {MAX_NODES} nodes (aliases?); simplify it"
            return
        line = node.start_mark.line + 1
        if id(node) in ancestors:
            self.fatal = f"line {line}: {dotted(path) or 'document'}: an alias refers to a node that contains it"
            return
        if len(ancestors) >= MAX_DEPTH:
            self.fatal = f"line {line}: the document is nested more than {MAX_DEPTH} levels deep (aliases?)"
            return
        self.lines.setdefault(path, line)
        if isinstance(node, yaml.ScalarNode):
            self.chars += len(node.value)
            if self.chars > MAX_EXPANDED_CHARS:
                self.fatal = f"the document expands to more than {MAX_EXPANDED_CHARS} characters (aliases?)"
            return
        inside = ancestors | {id(node)}
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
                key_line = key.start_mark.line + 1
                if name in seen:
                    self.problems.append(f"line {key_line}: {dotted((*path, name))}: duplicate key {name!r}")
                seen.add(name)
                self.visit(key, (*path, name), inside)
                self.lines[(*path, name)] = key_line
                self.visit(value, (*path, name), inside)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.visit(item, (*path, index), inside)


def dump(document: Any) -> str:
    """A document as YAML text, in the order given (what create writes)."""
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def nesting_problem(value: Any, where: str) -> str | None:
    """The problem of data that did not come through :func:`parse` (a JSON body, tool arguments) and nests
    deeper than :data:`MAX_DEPTH` levels or holds more than :data:`MAX_NODES` values; None when it is fine.
    Checked before any recursive walk over the data."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            return f"{where}: nested more than {MAX_DEPTH} levels deep"
        if count > MAX_NODES:
            return f"{where}: more than {MAX_NODES} values"
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((child, depth + 1) for child in item)
    return None


def _plain(value: Any) -> Any:
    """YAML dates become ISO strings and keys strings, so a document is always JSON data."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes | set):
        return str(value)
    return value
