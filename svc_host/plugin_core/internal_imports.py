"""Which of svc's internal modules a plugin imports: everything under ``svc_host`` but its two doors.

A plugin imports ``svc_host.plugin`` (and, in its tests, ``svc_host.testing``); every other module may change in
any release. When svc loads a plugin that is not its own, it reads the source of the plugin's modules loaded by
then and warns (``DeprecationWarning``, and the log) once per internal import, naming the file, the line and the
module, so the author learns it from their own test run rather than from the release that breaks them.
"""

from __future__ import annotations

import ast
import logging
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

DOORS = ("svc_host.plugin", "svc_host.testing")
"""What a plugin may import of svc (with their submodules: ``svc_host.testing.plugin`` is the pytest plugin)."""


@dataclass(frozen=True)
class InternalImport:
    """One import of an internal module: where it is and what it imports."""

    path: str
    line: int
    module: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line} imports {self.module}, which is internal to svc and may change in any release: "
            "import from svc_host.plugin (docs/plugins/api.md)"
        )


def internal_imports(source: str, path: str) -> list[InternalImport]:
    """The imports of internal svc modules in one file's ``source`` (any place in the file)."""
    found: list[InternalImport] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
            if node.module == "svc_host":  # from svc_host import settings: the submodules named
                names = [f"svc_host.{alias.name}" for alias in node.names if alias.name not in PACKAGE_NAMES]
        else:
            continue
        found += [InternalImport(path, node.lineno, name) for name in names if _internal(name)]
    return found


PACKAGE_NAMES = ("hookimpl", "__version__")
"""What ``svc_host`` itself offers (``from svc_host import hookimpl`` predates ``svc_host.plugin``)."""


def _internal(module: str) -> bool:
    if not module.startswith("svc_host."):
        return False
    return not any(module == door or module.startswith(door + ".") for door in DOORS)


def warn_internal_imports(package: str) -> list[InternalImport]:
    """Warn about every internal import in the loaded modules of ``package`` (a plugin's top-level package)."""
    found: list[InternalImport] = []
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not (name == package or name.startswith(package + ".")) or not file or not file.endswith(".py"):
            continue
        try:
            source = Path(file).read_text(encoding="utf-8")
            found += internal_imports(source, file)
        except (OSError, SyntaxError, UnicodeDecodeError):  # nothing to learn from a file that cannot be read
            continue
    for each in found:
        log.warning("%s", each)
        warnings.warn(str(each), DeprecationWarning, stacklevel=2)
    return found
