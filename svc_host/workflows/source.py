"""YAML text to plain data, with the line of every key and item so that problems can say where they are.

Only YAML's safe subset is read (no tags that build objects). Duplicate keys in a mapping are problems
(YAML would silently keep the last one), and so is a document that expands past :data:`MAX_NODES` nodes
through aliases.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import yaml

Path = tuple[str | int, ...]
MAX_NODES = 200_000


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
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Parsed(data=None)
        walk = _Walk()
        walk.visit(node, ())
        if walk.exhausted:
            problem = f"the document expands to more than {MAX_NODES} nodes (aliases?); simplify it"
            return Parsed(data=None, lines=walk.lines, problems=[problem], fatal=True)
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


class _Walk:
    """Records the line of every path and duplicate keys, giving up past ``MAX_NODES`` nodes."""

    def __init__(self) -> None:
        self.lines: dict[Path, int] = {}
        self.problems: list[str] = []
        self.count = 0

    @property
    def exhausted(self) -> bool:
        return self.count > MAX_NODES

    def visit(self, node: yaml.Node, path: Path) -> None:
        self.count += 1
        if self.exhausted:
            return
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
                line = key.start_mark.line + 1
                if name in seen:
                    self.problems.append(f"line {line}: {dotted((*path, name))}: duplicate key {name!r}")
                seen.add(name)
                self.lines.setdefault((*path, name), line)
                self.visit(value, (*path, name))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.visit(item, (*path, index))


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
