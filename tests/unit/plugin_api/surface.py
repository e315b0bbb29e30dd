"""The public plugin API as data: every name of ``svc_host.plugin.__all__`` and ``svc_host.testing.__all__`` with
its kind and signature(s), every hook specification with its signature and pluggy options, and every fixture of
svc's pytest plugin with the fixtures it asks for.

``python tests/unit/plugin_api/surface.py --write`` records the surface in ``public_api.json`` beside this file,
after a change that bumped ``API_VERSION`` and has its CHANGELOG entry (``test_public_api.py`` checks both).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("public_api.json")


def _signature(value: Any) -> str:
    try:
        return str(inspect.signature(value))
    except (TypeError, ValueError):
        return "(...)"


def _class_surface(cls: type) -> dict[str, Any]:
    members: dict[str, str] = {}
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_") and name not in ("__init__", "__call__"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            members[name] = _signature(member.__func__)
        elif isinstance(member, property):
            members[name] = "property"
        elif inspect.isfunction(member):
            members[name] = _signature(member)
    fields: dict[str, str] = {}
    if dataclasses.is_dataclass(cls):
        fields = {field.name: str(field.type) for field in dataclasses.fields(cls)}
    elif hasattr(cls, "model_fields"):
        fields = {name: str(field.annotation) for name, field in cls.model_fields.items()}
    elif issubclass(cls, enum.Enum):
        fields = {member.name: repr(member.value) for member in cls}
    bases = [base.__name__ for base in cls.__bases__]
    return {"kind": "class", "bases": bases, "fields": fields, "members": members}


TESTING = "svc_host.testing."
"""The prefix of ``svc_host.testing``'s names in the snapshot (``svc_host.plugin``'s have none)."""

HOOKSPEC = "hookspec "
"""The prefix of a hook specification in the snapshot: ``hookspec svc_transports``."""


def _describe(value: Any) -> dict[str, Any]:
    if inspect.isclass(value):
        return _class_surface(value)
    if callable(value):
        return {"kind": "function", "signature": _signature(value)}
    return {"kind": "value", "type": type(value).__name__}


def hookspecs() -> dict[str, Any]:
    """Every hook svc calls: its signature (what an implementation may take) and pluggy's options for it."""
    from svc_host.plugin_core import specs
    from svc_host.plugin_core.identity import PROJECT

    found: dict[str, Any] = {}
    for name, function in sorted(vars(specs).items()):
        options = getattr(function, f"{PROJECT}_spec", None)
        if options is not None:
            found[f"{HOOKSPEC}{name}"] = {
                "kind": "hookspec",
                "signature": _signature(function),
                "options": {key: options[key] for key in sorted(options) if options[key]},
            }
    return found


FIXTURE = "fixture "
"""The prefix of a fixture of svc's pytest plugin in the snapshot: ``fixture svc_test_host``."""


def fixtures() -> dict[str, Any]:
    """The fixtures of svc's opt-in pytest plugin (``svc_host.testing.plugin``): their names and the fixtures each
    asks for, which a project's own fixture of the same name overrides."""
    from svc_host.testing import plugin

    return {
        f"{FIXTURE}{name}": {"kind": "fixture", "requests": list(inspect.signature(getattr(plugin, name)).parameters)}
        for name in sorted(plugin.FIXTURES)
    }


def surface() -> dict[str, Any]:
    import svc_host.plugin as api
    from svc_host import testing

    found = {name: _describe(getattr(api, name)) for name in sorted(api.__all__)}
    found.update({f"{TESTING}{name}": _describe(getattr(testing, name)) for name in sorted(testing.__all__)})
    found.update(hookspecs())
    found.update(fixtures())
    return found


def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SNAPSHOT.read_text())
    return data


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/unit/plugin_api/surface.py --write")
    import svc_host.plugin as api

    SNAPSHOT.write_text(json.dumps({"api_version": api.API_VERSION, "names": surface()}, indent=1) + "\n")
    print(f"recorded the {len(surface())} public names and hooks of plugin API {api.API_VERSION} in {SNAPSHOT}")
