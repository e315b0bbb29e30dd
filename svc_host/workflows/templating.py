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

Compiling is bounded too, because Jinja turns a template into Python source and compiles that: its memory grows
with the template (200 KB of ``{{ x }}`` took ~400 MB) and its parser recurses on nesting (``((((x))))`` 70 deep
raised ``RecursionError``, a 300-term sum a ``SyntaxError`` from Python's compiler). So before Jinja parses, a
cheap scan of Jinja's own tokens refuses a template over :data:`MAX_TEMPLATE_CHARS` characters or
:data:`MAX_TEMPLATE_TOKENS` tokens, or nested (brackets and ``{% if %}`` blocks) more than
:data:`MAX_TEMPLATE_NESTING` levels; after it parses, a tree deeper than :data:`MAX_TEMPLATE_DEPTH` levels (long
chains such as ``a + b + ...`` or ``x|f|f|...``) is refused before it is compiled. The templates of one workflow
share a :class:`RenderBudget`: :data:`MAX_WORKFLOW_TEMPLATE_TOKENS` tokens compiled, :data:`MAX_WORKFLOW_BUILT_CHARS`
characters built while rendering (filters that read their whole input count it), and, as the last resort,
:data:`TEMPLATE_CPU_SECONDS` of the thread's CPU time. Whatever still escapes (``RecursionError``,
``SyntaxError``, ``MemoryError`` from Jinja or Python) is a problem in words like every other template error.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from svc_host.workflows.bounded import (
    MAX_RENDER_CHARS,
    Meter,
    Refused,
    bounded,
    bounded_join,
    bounded_join_filter,
    bounded_replace,
    bounded_text,
    bounded_tojson,
    charged,
    metered,
    render_bounded,
)
from svc_host.workflows.source import Path, dotted

if TYPE_CHECKING:
    from jinja2 import Template, nodes
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
MAX_TEMPLATE_CHARS = 65_536
"""One string holding a template (a plain string without ``{{``/``{%``/``{#`` may be as long as the file)."""
MAX_TEMPLATE_TOKENS = 5_000
"""Jinja tokens inside the tags of one template (``{{ a }}`` is three)."""
MAX_TEMPLATE_NESTING = 20
"""Brackets and ``{% if %}`` blocks open at once in one template."""
MAX_TEMPLATE_DEPTH = 50
"""Levels of one parsed template (each term of ``a + b + c`` and each filter of ``x|f|g`` is one more)."""
MAX_WORKFLOW_TEMPLATE_TOKENS = 50_000
"""Tokens of all the templates of one workflow (an aliased string counts once)."""
MAX_WORKFLOW_BUILT_CHARS = 16_000_000
"""Characters all the renders of one workflow may build, intermediate strings included."""
TEMPLATE_CPU_SECONDS = 5.0
"""CPU time (of the thread, not wall time) all the templates of one workflow may take to compile and render."""
_NOT_COUNTED = frozenset({"whitespace", "data", "comment_begin", "comment", "comment_end", "raw_begin", "raw_end"})
_OPENING, _CLOSING, _PREFIXES = frozenset("([{"), frozenset(")]}"), frozenset({"not", "-", "+"})


@functools.cache
def args_environment() -> SandboxedEnvironment:
    """The sandbox args are rendered in (no loader, no autoescape: these are shell words, not HTML)."""
    import posixpath

    from jinja2 import StrictUndefined, pass_environment
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
    for name in ("trim", "basename", "dirname", "int", "float"):
        environment.filters[name] = metered(environment.filters[name])
    for name in ("min", "max"):
        environment.filters[name] = pass_environment(metered(environment.filters[name], after_environment=True))
    return environment


@dataclass
class RenderBudget:
    """What the templates of one workflow may still spend (rendered characters, tokens compiled, characters
    built, thread CPU time), and what each template gave (an aliased string is rendered once however often it
    appears). Once ``spent``, the remaining templates are kept as written: the first that overspent is reported."""

    remaining: int = MAX_RENDERED_CHARS
    tokens: int = MAX_WORKFLOW_TEMPLATE_TOKENS
    built: int = MAX_WORKFLOW_BUILT_CHARS
    cpu_deadline: float = field(default_factory=lambda: time.thread_time() + TEMPLATE_CPU_SECONDS)
    spent: bool = False
    done: dict[str, str | ValueError] = field(default_factory=dict)

    def exhausted(self) -> bool:
        """True once tokens, built characters or CPU time are used up."""
        return self.tokens < 0 or self.built < 0 or time.thread_time() > self.cpu_deadline

    def meter(self) -> Meter:
        """The bounds of the next render: its own, or what is left of the workflow's when that is less."""
        cpu_over = f"the templates of the workflow need more than {TEMPLATE_CPU_SECONDS} seconds of CPU time in all"
        if self.built >= MAX_RENDER_CHARS:
            return Meter(cpu_deadline=self.cpu_deadline, cpu_over=cpu_over)
        over = (
            f"the templates of the workflow build more than {MAX_WORKFLOW_BUILT_CHARS} characters in all "
            "while they render"
        )
        return Meter(limit=self.built, over=over, cpu_deadline=self.cpu_deadline, cpu_over=cpu_over)


def render_value(text: str, args: Mapping[str, Any], budget: RenderBudget | None = None) -> str:
    """Render one string; ``ValueError`` with a short reason when the template is wrong, unsafe or too big.
    ``budget`` is what the workflow's templates may still spend (a fresh one by default)."""
    if not any(marker in text for marker in _MARKERS):
        return text
    from jinja2 import TemplateError
    from jinja2.exceptions import SecurityError

    budget = budget or RenderBudget()
    try:
        template = _compiled(text, budget)
        meter = budget.meter()
        try:
            return render_bounded(template.generate(dict(args)), meter)
        finally:
            budget.built -= meter.built
    except Refused as exc:
        raise ValueError(f"template refused: {exc}") from None
    except SecurityError as exc:
        raise ValueError(f"template refused by the sandbox: {exc}") from None
    except TemplateError as exc:
        raise ValueError(f"template error: {exc.message or type(exc).__name__}") from None
    except RecursionError:
        raise ValueError("template refused: nested too deeply to compile; split it or use fewer levels") from None
    except SyntaxError as exc:  # Python's compiler, on the code Jinja generated
        raise ValueError(f"template refused: too complex to compile ({exc.msg})") from None
    except MemoryError:
        raise ValueError("template refused: out of memory while compiling or rendering it") from None
    except (ArithmeticError, TypeError, ValueError, LookupError, OverflowError) as exc:
        raise ValueError(f"template error: {type(exc).__name__}: {exc}") from None


def _compiled(text: str, budget: RenderBudget) -> Template:
    """The template of ``text`` once it passed the scan, the workflow's budget and the checks of its tree."""
    budget.tokens -= _scanned(text)
    if budget.tokens < 0:
        raise Refused(f"the templates of the workflow hold more than {MAX_WORKFLOW_TEMPLATE_TOKENS} tokens in all")
    budget.meter().check_cpu()
    tree = args_environment().parse(text)
    _check_tree(tree, text)
    return args_environment().from_string(tree)


def _scanned(text: str) -> int:
    """The tokens in ``text``'s tags, counted by Jinja's lexer (flat, linear) before anything parses them;
    ``Refused`` past the size, token or nesting limits."""
    if len(text) > MAX_TEMPLATE_CHARS:
        raise Refused(f"a template is at most {MAX_TEMPLATE_CHARS} characters; this one has {len(text)}")
    tokens = nesting = prefixes = 0
    block_name = False
    for line, kind, value in args_environment().lex(text):
        if kind in _NOT_COUNTED:
            continue
        tokens += 1
        if tokens > MAX_TEMPLATE_TOKENS:
            raise Refused(f"more than {MAX_TEMPLATE_TOKENS} tokens in one template{_at(text, line)}")
        if kind == "operator":
            nesting += (value in _OPENING) - (value in _CLOSING)
        elif kind == "name" and block_name:  # {% if %} opens a level, {% endif %} closes it
            nesting += -1 if value.startswith("end") else 0 if value in ("elif", "else") else 1
        # ``not not not x`` and ``- - - x`` nest like brackets: each one is a level of Jinja's parser
        prefixes = prefixes + 1 if value in _PREFIXES and kind in ("operator", "name") else 0
        if nesting + prefixes > MAX_TEMPLATE_NESTING:
            raise Refused(
                f"nested more than {MAX_TEMPLATE_NESTING} levels (brackets, {{% if %}} blocks, not/-/+ in a row)"
                f"{_at(text, line)}"
            )
        block_name = kind == "block_begin"
    return tokens


def _check_tree(tree: nodes.Template, text: str) -> None:
    """Refuse what :data:`FILTERS` and the module docstring do not allow, and trees deeper than
    :data:`MAX_TEMPLATE_DEPTH` (walked without recursion: this is what keeps the compiler's recursion short)."""
    from jinja2 import nodes

    allowed = (
        nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Const, nodes.Getattr, nodes.Getitem,
        nodes.Filter, nodes.Concat, nodes.CondExpr, nodes.Compare, nodes.Operand, nodes.And, nodes.Or, nodes.Not,
        nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Neg, nodes.Pos, nodes.If,
        nodes.List, nodes.Tuple, nodes.Keyword, nodes.Test,
    )  # fmt: skip
    stack: list[tuple[nodes.Node, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TEMPLATE_DEPTH:
            raise Refused(
                f"the template nests more than {MAX_TEMPLATE_DEPTH} levels once parsed (a long chain of operators, "
                f"filters, lookups or conditionals?){_at(text, node.lineno)}"
            )
        if not isinstance(node, allowed):
            raise Refused(f"{type(node).__name__.lower()} is not allowed in workflow templates")
        if isinstance(node, nodes.Filter) and node.name not in FILTERS:
            raise Refused(f"filter {node.name!r} is not allowed; use one of: {', '.join(sorted(FILTERS))}")
        if isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            raise Refused(f"attribute {node.attr!r} is not allowed")
        stack += reversed([(child, depth + 1) for child in node.iter_child_nodes()])  # in the order written


def _at(text: str, line: int) -> str:
    """`` at template line N`` for a template of several lines (the problem already names the field's line)."""
    return f" at template line {line}" if "\n" in text else ""


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
    if budget.remaining < 0 or budget.spent:
        return value
    if value not in budget.done:
        try:
            budget.done[value] = render_value(value, args, budget)
        except ValueError as exc:
            budget.done[value] = exc
            budget.spent = budget.exhausted()
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
