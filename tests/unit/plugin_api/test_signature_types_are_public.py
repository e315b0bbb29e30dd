"""Every svc type a public signature names is itself public: a plugin author never needs an internal import.

The walk covers every name of ``svc_host.plugin.__all__`` and ``svc_host.testing.__all__`` (functions, classes,
their public methods and their pydantic or dataclass fields) and every hook specification, resolves their type
hints, typing-only imports included (``if TYPE_CHECKING:``), and fails on an annotation naming a class of an
``svc_host`` module that neither door offers. Types of other libraries (pydantic, FastAPI, asyncssh, Jinja2) are
the plugin's own to import and are not held here.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import sys
import typing
from collections.abc import Callable, Iterator

import svc_host.plugin as api
from svc_host import testing
from svc_host.plugin_core import specs
from svc_host.plugin_core.identity import PROJECT

NOT_EXPORTED: dict[str, str] = {
    "svc_host.api.security.ServerSecurity": (
        "what svc_host.testing.security_for_tests returns is only handed to svc's own app factory; no public "
        "signature takes one, so exporting the class would freeze svc serve's security settings for nothing"
    ),
}
"""svc types a public signature names that stay internal on purpose, each with the reason (kept short: an entry
no signature needs any more fails the test, so none lingers)."""


def public_objects() -> dict[str, object]:
    """What the two doors offer, by the name a plugin imports it with."""
    found: dict[str, object] = {name: getattr(api, name) for name in api.__all__}
    found.update({f"svc_host.testing.{name}": getattr(testing, name) for name in testing.__all__})
    return found


@functools.cache
def typing_only_names(module_name: str) -> dict[str, object]:
    """The names ``module_name`` imports under ``if TYPE_CHECKING:``, which its string annotations use."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return {}
    namespace: dict[str, object] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)):
            continue
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom):
                source = "." * statement.level + (statement.module or "")
                imported = importlib.import_module(source, module.__package__ if statement.level else None)
                for alias in statement.names:
                    namespace[alias.asname or alias.name] = getattr(imported, alias.name, None) or (
                        importlib.import_module(f"{imported.__name__}.{alias.name}")
                    )
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    imported = importlib.import_module(alias.name)
                    namespace[alias.asname or alias.name.partition(".")[0]] = (
                        imported if alias.asname else sys.modules[alias.name.partition(".")[0]]
                    )
    return namespace


def hints(owner: object) -> dict[str, object]:
    """``owner``'s resolved annotations: a function's parameters and return, a class's fields."""
    if isinstance(owner, type) and hasattr(owner, "model_fields"):  # pydantic resolved them already
        return {name: field.annotation for name, field in owner.model_fields.items()}
    module = getattr(owner, "__module__", None) or ""
    localns: dict[str, typing.Any] = {}
    for base in owner.__mro__ if isinstance(owner, type) else ():
        localns.update(typing_only_names(base.__module__) if base.__module__.startswith("svc_host") else {})
    localns.update(typing_only_names(module) if module.startswith("svc_host") else {})
    return typing.get_type_hints(owner, localns=localns)


def parts(owner_name: str, value: object) -> Iterator[tuple[str, object]]:
    """What of a public name has annotations: the function itself; a class, its fields and its public methods
    (inherited from svc's own classes too, since a subclass offers them)."""
    if inspect.isclass(value):
        if dataclasses.is_dataclass(value) or hasattr(value, "model_fields"):
            yield owner_name, value
        for base in value.__mro__:
            if not base.__module__.startswith("svc_host"):
                continue
            for name, member in vars(base).items():
                if name.startswith("_") and name not in ("__init__", "__call__"):
                    continue
                function = member.__func__ if isinstance(member, staticmethod | classmethod) else member
                function = function.fget if isinstance(function, property) else function
                if inspect.isfunction(function) and function.__module__.startswith("svc_host"):
                    yield f"{owner_name}.{name}", function
    elif inspect.isfunction(value) or inspect.ismethod(value):
        yield owner_name, value


def classes(hint: object) -> Iterator[type]:
    """Every class inside a hint (``dict[str, JobStatus]``, ``list[NodeInfo] | None``, ``type[M]``)."""
    if isinstance(hint, type):
        yield hint
    origin = typing.get_origin(hint)
    if isinstance(origin, type):
        yield origin
    for argument in typing.get_args(hint):
        yield from classes(argument)


def annotated() -> Iterator[tuple[str, Callable[..., object] | type]]:
    for name, value in public_objects().items():
        yield from parts(name, value)  # type: ignore[misc]
    for name, function in sorted(vars(specs).items()):
        if getattr(function, f"{PROJECT}_spec", None) is not None:
            yield f"hookspec {name}", function


def test_every_svc_type_in_a_public_signature_is_public() -> None:
    offered = {id(value) for value in public_objects().values()}
    missing: dict[str, set[str]] = {}
    for where, owner in annotated():
        for field, hint in hints(owner).items():
            for found in classes(hint):
                if found.__module__.startswith("svc_host") and id(found) not in offered:
                    missing.setdefault(f"{found.__module__}.{found.__qualname__}", set()).add(f"{where}: {field}")
    unexported = {name: uses for name, uses in missing.items() if name not in NOT_EXPORTED}
    assert unexported == {}, "svc types in public signatures that neither door exports: " + "; ".join(
        f"{name} (in {', '.join(sorted(uses))})" for name, uses in sorted(unexported.items())
    )
    assert sorted(NOT_EXPORTED.keys() - missing.keys()) == [], "NOT_EXPORTED names a type no signature uses now"


def test_the_walk_reads_typing_only_annotations() -> None:
    """The walk is not blind to ``if TYPE_CHECKING:`` imports: a hook's ``host`` resolves to ``PluginHost``."""
    assert api.PluginHost in set(classes(hints(specs.svc_background_tasks)["host"]))
