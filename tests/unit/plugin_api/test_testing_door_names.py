"""Every public name of ``svc_host.testing`` is the object the docs promise, whatever was imported before it.

A name that is also the name of a submodule (``live_server``) was the module, not the function, in a process that had
imported the submodule first (as svc's own event-stream tests do): the snapshot test failed in the full suite only.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from svc_host import testing


@pytest.mark.parametrize("name", sorted(testing.__all__))
def test_a_public_name_is_its_object_after_its_modules_were_imported(name: str) -> None:
    # a fresh interpreter: every module behind the door is imported first, then the name is read through the door
    probe = textwrap.dedent(
        f"""
        import importlib, pkgutil, types
        import svc_host.testing as door
        for found in pkgutil.iter_modules(door.__path__):
            if found.name not in ("autoload", "plugin"):  # pytest plugins: they need a running pytest
                importlib.import_module(f"svc_host.testing.{{found.name}}")
        value = getattr(door, {name!r})
        print("module" if isinstance(value, types.ModuleType) else "object")
        """
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "object", f"svc_host.testing.{name} is a module once its submodules are imported"
