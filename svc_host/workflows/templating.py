"""Workflow ``args``: checked for ``python:`` values, then substituted into job fields by a sandboxed Jinja2.

Nothing a user writes is ever evaluated as Python. ``args`` values are data: a value starting with
``python:`` (a convention of older tools that ran it through ``eval``) is refused wherever it appears.
Templates (``{{ lr }}``) in the jobs are rendered by Jinja2's ``SandboxedEnvironment`` with
``StrictUndefined``: an unknown variable is an error, and attribute tricks such as
``{{ ''.__class__ }}`` are refused by the sandbox.

Templates are for substitution, so only a small, cheap part of Jinja is accepted: variables, item and
attribute lookup, literals, ``~``/``+``/``-`` and arithmetic on numbers, comparisons, ``and``/``or``/``not``,
``x if c else y``, ``{% if %}`` and the filters in :data:`FILTERS`. Calls, loops, macros, ``**`` and
string repetition are refused before rendering: a template can neither escape the sandbox nor make the
server build huge strings or loop for hours. What can still grow a string is bounded while it runs
(:mod:`svc_host.workflows.bounded`): every string-building operation refuses to build more than
``MAX_FIELD_CHARS`` characters (so nesting ``replace`` cannot multiply a field into gigabytes), one render
stops once it has built ``MAX_RENDER_CHARS`` in all, ``tojson(indent=...)`` is at most 32, every rendered field
is at most ``MAX_FIELD_CHARS`` long, and all the fields of one workflow at most :data:`MAX_RENDERED_CHARS`
together.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from svc_host.workflows.bounded import (
    Refused,
    bounded,
    bounded_join,
    bounded_join_filter,
    bounded_replace,
    bounded_text,
    bounded_tojson,
    charged,
    render_bounded,
)
from svc_host.workflows.source import Path, dotted

if TYPE_CHECKING:
    from jinja2.sandbox import SandboxedEnvironment

PYTHON_PREFIX = "python:"
_MARKERS = ("{{", "{%", "{#")


def python_problems(source: str, value: Any, path: Path = ()) -> list[str]:
    """The spec's message for every string starting with ``python:`` in ``value`` (nested anywhere).

    ``<source> at '<path>' contains 'python:' prefix which is not allowed: '<value>'``
    """
    problems: list[str] = []
    if isinstance(value, str):
        if value.lstrip().lower().startswith(PYTHON_PREFIX):
            problems.append(
                f"{source} at '{dotted(path)}' contains '{PYTHON_PREFIX}' prefix which is not allowed: '{value}'"
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            problems += python_problems(source, item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            problems += python_problems(source, item, (*path, index))
    return problems


FILTERS = frozenset(
    {"default", "d", "lower", "upper", "title", "capitalize", "trim", "string", "int", "float", "abs", "round",
     "length", "count", "first", "last", "join", "replace", "basename", "dirname", "tojson", "min", "max"}
)  # fmt: skip
"""The filters a template may use (``basename``/``dirname`` are svc's own)."""
_NUMBER_LIMIT = 10**18
MAX_RENDERED_CHARS = 8_000_000
"""All the rendered strings of one workflow together."""


@functools.cache
def args_environment() -> SandboxedEnvironment:
    """The sandbox args are rendered in (no loader, no autoescape: these are shell words, not HTML)."""
    import posixpath

    from jinja2 import StrictUndefined, nodes
    from jinja2.compiler import CodeGenerator, Frame
    from jinja2.sandbox import SandboxedEnvironment

    class _BoundedConcat(CodeGenerator):
        """``~`` compiles to the environment's bounded join instead of an unbounded ``str.join``."""

        def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
            self.write("environment.bounded_join((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write("))")

    class _ArgsSandbox(SandboxedEnvironment):
        intercepted_binops = frozenset({"*", "/", "//", "%", "+"})
        code_generator_class = _BoundedConcat
        bounded_join = staticmethod(bounded_join)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (left, right))
            if operator == "+" and not numbers:
                if isinstance(left, str) and isinstance(right, str):
                    bounded(len(left) + len(right), "'+'")
                    return left + right
                raise Refused("'+' is only for numbers or two strings in workflow templates")
            if not numbers or any(abs(v) > _NUMBER_LIMIT for v in (left, right)):
                raise Refused(f"'{operator}' is only for numbers up to 10**18 in workflow templates")
            return super().call_binop(context, operator, left, right)

    environment = _ArgsSandbox(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True, finalize=bounded_text
    )
    environment.globals.clear()  # no range(), lipsum(), cycler...: only the args are in scope
    environment.filters["basename"] = posixpath.basename
    environment.filters["dirname"] = posixpath.dirname
    environment.filters["replace"] = bounded_replace
    environment.filters["join"] = bounded_join_filter
    environment.filters["tojson"] = bounded_tojson
    environment.filters["string"] = bounded_text
    for name in ("upper", "lower", "title", "capitalize"):
        environment.filters[name] = charged(environment.filters[name])
    return environment


def _check_template(text: str) -> None:
    """Refuse what :data:`FILTERS` and the module docstring do not allow."""
    from jinja2 import nodes

    allowed = (
        nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Const, nodes.Getattr, nodes.Getitem,
        nodes.Filter, nodes.Concat, nodes.CondExpr, nodes.Compare, nodes.Operand, nodes.And, nodes.Or, nodes.Not,
        nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Neg, nodes.Pos, nodes.If,
        nodes.List, nodes.Tuple, nodes.Keyword, nodes.Test,
    )  # fmt: skip
    tree = args_environment().parse(text)
    for node in tree.find_all(nodes.Node):
        if not isinstance(node, allowed):
            raise Refused(f"{type(node).__name__.lower()} is not allowed in workflow templates")
        if isinstance(node, nodes.Filter) and node.name not in FILTERS:
            raise Refused(f"filter {node.name!r} is not allowed; use one of: {', '.join(sorted(FILTERS))}")
        if isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            raise Refused(f"attribute {node.attr!r} is not allowed")


@dataclass
class RenderBudget:
    """Characters the rendered strings of one workflow may still add up to, and what each template gave (an
    aliased string is rendered once however often it appears)."""

    remaining: int = MAX_RENDERED_CHARS
    done: dict[str, str | ValueError] = field(default_factory=dict)


def render_value(text: str, args: Mapping[str, Any]) -> str:
    """Render one string; ``ValueError`` with a short reason when the template is wrong, unsafe or too big."""
    if not any(marker in text for marker in _MARKERS):
        return text
    from jinja2 import TemplateError
    from jinja2.exceptions import SecurityError

    try:
        _check_template(text)
        return render_bounded(args_environment().from_string(text).generate(dict(args)))
    except Refused as exc:
        raise ValueError(f"template refused: {exc}") from None
    except SecurityError as exc:
        raise ValueError(f"template refused by the sandbox: {exc}") from None
    except TemplateError as exc:
        raise ValueError(f"template error: {exc.message or type(exc).__name__}") from None
    except (ArithmeticError, TypeError, ValueError, LookupError, OverflowError, MemoryError) as exc:
        raise ValueError(f"template error: {type(exc).__name__}: {exc}") from None


def render_tree(
    value: Any,
    args: Mapping[str, Any],
    path: Path,
    problem: Callable[[Path, str], None],
    budget: RenderBudget | None = None,
) -> Any:
    """``value`` with every string rendered; a string that fails is kept as written and reported.

    Once ``budget`` is spent the remaining strings are kept as written and only the first is reported.
    """
    budget = budget or RenderBudget()
    if isinstance(value, str):
        return _render_string(value, args, path, problem, budget)
    if isinstance(value, dict):
        return {key: render_tree(item, args, (*path, key), problem, budget) for key, item in value.items()}
    if isinstance(value, list):
        return [render_tree(item, args, (*path, index), problem, budget) for index, item in enumerate(value)]
    return value


def _render_string(
    value: str, args: Mapping[str, Any], path: Path, problem: Callable[[Path, str], None], budget: RenderBudget
) -> str:
    if budget.remaining < 0:
        return value
    if value not in budget.done:
        try:
            budget.done[value] = render_value(value, args)
        except ValueError as exc:
            budget.done[value] = exc
    outcome = budget.done[value]
    if isinstance(outcome, ValueError):
        problem(path, str(outcome))
        return value
    if outcome is not value:  # plain strings are in the document already; rendered ones add to it
        budget.remaining -= len(outcome)
        if budget.remaining < 0:
            problem(path, f"template refused: the templates render to more than {MAX_RENDERED_CHARS} characters in all")
            return value
    return outcome
