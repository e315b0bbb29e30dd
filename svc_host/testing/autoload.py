"""The ``pytest11`` entry point ``svc``: what pytest loads in every run of an environment where svc is installed.

It changes nothing for a project that does not use svc's test support: no option, mode, marker, fixture or warning.
svc's pytest plugin proper, ``svc_host.testing.plugin``, is opt-in (``-p svc_host.testing.plugin``; docs/plugins/
api.md "Test support"). For the plugin API 1.x line, a project written before the opt-in keeps working unchanged:
when a test module or conftest.py imports from ``svc_host.testing`` or asks for one of svc's fixtures, this module
registers the plugin for that run and warns (``DeprecationWarning``) that the project should opt in; from plugin
API 2.0 the entry point goes and nothing loads unasked.

Why not keep the plugin itself as the entry point and gate it: a module that pytest loads through an entry point
cannot also be asked for with ``-p`` (pytest registers one module under one name), and the fixtures of a loaded
plugin show in every project's ``pytest --fixtures``.
"""

from __future__ import annotations

import importlib
import inspect
import types
import warnings
from collections.abc import Generator, Mapping

import pytest

PLUGIN = "svc_host.testing.plugin"
"""The module a project opts in with (``-p svc_host.testing.plugin``)."""

TESTING = "svc_host.testing"

FIXTURES = frozenset(
    {
        "svc_isolated_home",
        "svc_plugin_manager",
        "svc_installed_plugins",
        "svc_register_plugin",
        "slurm_cluster",
        "svc_paths",
        "svc_database_url",
        "svc_test_host",
        "svc_host",
        "svc_api_client",
        "svc_mcp_client",
        "svc_cli",
    }
)
"""The fixtures of ``svc_host.testing.plugin``, kept here (the plugin imports them) so that a project that never uses
svc imports nothing of the plugin."""

LOADED_FOR = pytest.StashKey[str]()
"""Where this run's use of svc's test support was found first, once the plugin was loaded for it."""

WARNED = pytest.StashKey[bool]()
"""Set once the opt-in warning was given in this run."""


def from_testing(value: object) -> bool:
    """Whether ``value`` is ``svc_host.testing``, one of its modules, or something defined there."""
    name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    return isinstance(name, str) and (name == TESTING or name.startswith(TESTING + "."))


def asks_for_svc_fixture(value: object) -> bool:
    """Whether ``value`` is a function (a test, a fixture, a method) with a parameter named like svc's fixtures."""
    function = inspect.unwrap(value) if callable(value) else value  # a pytest fixture wraps its function
    if not inspect.isfunction(function):
        return False
    code = function.__code__
    return not FIXTURES.isdisjoint(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def uses_svc_test_support(namespace: Mapping[str, object]) -> bool:
    """Whether a module's namespace imports from ``svc_host.testing`` or defines a function, or a method of a class
    of its own, that asks for one of svc's fixtures."""
    for value in namespace.values():
        if from_testing(value) or asks_for_svc_fixture(value):
            return True
        if inspect.isclass(value) and any(asks_for_svc_fixture(member) for member in vars(value).values()):
            return True
    return False


def load_for(config: pytest.Config, where: str) -> None:
    """Register svc's plugin for this run because ``where`` uses it, unless the project opted in (or it is
    already loaded)."""
    manager = config.pluginmanager
    if manager.has_plugin(PLUGIN):
        return
    # registered as -p would, but without asking pytest to rewrite its asserts: svc's contract suites import it
    manager.register(importlib.import_module(PLUGIN), PLUGIN)
    config.stash[LOADED_FOR] = where


def warn_once(config: pytest.Config) -> None:
    """Give the opt-in warning, once a run, from inside a test module's collection: pytest records it there for the
    warnings summary, and under ``-W error`` reports it as that module's collection error (raised from a hook
    outside a collector, such as ``pytest_collection``, it would end the run in an INTERNALERROR)."""
    where = config.stash.get(LOADED_FOR, None)
    if where is None or config.stash.get(WARNED, False):
        return
    config.stash[WARNED] = True
    warnings.warn(
        f"{where} uses svc's pytest fixtures or contract suites without asking for svc's pytest plugin; it was "
        f"loaded for this run, but from plugin API 2.0 it loads only when asked: add "
        f'addopts = "-p {PLUGIN}" to your pytest configuration',
        DeprecationWarning,
        stacklevel=1,
    )


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    """A conftest.py that uses svc's test support: load the plugin before the tests under it are collected (their
    fixtures are looked up as they are); the warning waits for the first test module's collection."""
    path = getattr(plugin, "__file__", None)
    if not isinstance(plugin, types.ModuleType) or not isinstance(path, str) or not path.endswith("conftest.py"):
        return
    config = manager.get_plugin("pytestconfig")
    if isinstance(config, pytest.Config) and uses_svc_test_support(vars(plugin)):
        load_for(config, path)


CHECKED = pytest.StashKey[bool]()
"""Set on a test module once its namespace was looked at."""


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Module | pytest.Class, name: str, obj: object) -> None:
    """Before a test module's first item is made: load the plugin if the module uses svc's test support (its
    fixtures must be known before the module's tests are), and warn if it was loaded unasked, for this module or
    for a conftest.py."""
    if not isinstance(collector, pytest.Module) or collector.stash.get(CHECKED, False):
        return
    collector.stash[CHECKED] = True
    if uses_svc_test_support(vars(collector.obj)):
        load_for(collector.config, str(collector.path))
    warn_once(collector.config)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """While a test module imports: svc's contract suites mark tests ``cluster`` and ``slow``, markers its plugin
    registers, which is not loaded yet in a project that has not asked for it; pytest's unknown-mark warning for a
    mark svc's own modules use is not the project's (every other warning is left as it is)."""
    if not isinstance(collector, pytest.Module):
        return (yield)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=pytest.PytestUnknownMarkWarning, module=r"svc_host\.testing\.")
        return (yield)
