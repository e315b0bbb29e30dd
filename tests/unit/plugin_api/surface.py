"""The public plugin API as data: every name of ``svc_host.plugin.__all__`` with its kind and signature(s).

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


def surface() -> dict[str, Any]:
    import svc_host.plugin as api

    found: dict[str, Any] = {}
    for name in sorted(api.__all__):
        value = getattr(api, name)
        if inspect.isclass(value):
            found[name] = _class_surface(value)
        elif callable(value):
            found[name] = {"kind": "function", "signature": _signature(value)}
        else:
            found[name] = {"kind": "value", "type": type(value).__name__}
    return found


def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SNAPSHOT.read_text())
    return data


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/unit/plugin_api/surface.py --write")
    import svc_host.plugin as api

    SNAPSHOT.write_text(json.dumps({"api_version": api.API_VERSION, "names": surface()}, indent=1) + "\n")
    print(f"recorded {len(api.__all__)} public names of plugin API {api.API_VERSION} in {SNAPSHOT}")
