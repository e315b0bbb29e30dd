"""svc's pytest plugin, opt-in: fixtures for testing svc and svc plugins, and asyncio for the tests they serve.

A project asks for it in its pytest configuration, ``addopts = "-p svc_host.testing.plugin"`` (or ``-p
svc_host.testing.plugin`` on the command line, or ``pytest_plugins = ["svc_host.testing.plugin"]`` in its rootdir
conftest.py). Installing svc alone changes nothing in a project's pytest run: the ``pytest11`` entry point is
``svc_host.testing.autoload``, which stays out of the way (see there for the 1.x deprecation period).

Once asked for, this plugin registers the ``cluster`` and ``slow`` markers and leaves the project's pytest-asyncio
mode and loop scopes as they are: it runs in asyncio, one loop per test, only what it serves — the async tests of
a contract suite (``TransportContract``, ``SyncBackendContract``, and subclasses) and async tests that ask for
one of its fixtures — with the async fixtures those tests ask for unless pytest-asyncio already runs them. Fixture
names start with ``svc_`` (``svc_plugin_manager``, ``svc_installed_plugins``, ``svc_register_plugin``,
``svc_paths``, ``svc_database_url``, ``svc_test_host``, ``svc_api_client``, ``svc_mcp_client``, ``svc_cli``,
``svc_isolated_home``) except ``slurm_cluster``; ``svc_host`` is a deprecated alias of ``svc_test_host`` (a
fixture named like the package shadows it in the test).
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio

from svc_host.testing.autoload import FIXTURES

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    import httpx
    from mcp import Client

    from svc_host.host import Host
    from svc_host.plugin_core.manager import PluginManager
    from svc_host.settings.paths import SvcPaths


MARKERS = (
    "cluster: needs a real Slurm cluster (scripts/devcluster up in svc's repo); must run, never skip, under CI=true",
    "slow: takes more than ten seconds (time limits, many jobs)",
    "xdist_group(name): tests of one group run on one pytest-xdist worker, one after another (--dist loadgroup)",
)

HOLDS_GPUS = pytest.mark.xdist_group("svc-gpus")
"""Mark a test that holds the cluster's GPUs or counts them: such tests run one after another under
``pytest -n N --dist loadgroup`` (a count taken beside another test's GPU job is off by that job)."""


"""The fixtures this plugin provides: an async test asking for one of them runs in asyncio."""

CONTRACTS = (
    ("svc_host.testing.contract", "TransportContract"),
    ("svc_host.testing.sync_contract", "SyncBackendContract"),
)
"""Contract suites (module, class): their async tests, and those of their subclasses, run in asyncio."""


def pytest_configure(config: pytest.Config) -> None:
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)


def is_contract_class(cls: object) -> bool:
    """Whether ``cls`` is one of svc's contract suites or a subclass (a suite whose module was never imported
    has no subclass, so nothing is imported here)."""
    if not isinstance(cls, type):
        return False
    for module_name, class_name in CONTRACTS:
        module = sys.modules.get(module_name)
        if module is not None and issubclass(cls, getattr(module, class_name)):
            return True
    return False


def is_async(function: object) -> bool:
    function = getattr(function, "__func__", function)
    return inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)


def serves(item: pytest.Function) -> bool:
    """An async test this plugin runs in asyncio: a contract suite's, or one asking for a svc fixture."""
    return is_async(item.obj) and (is_contract_class(item.cls) or not FIXTURES.isdisjoint(item.fixturenames))


@pytest.hookimpl(wrapper=True, trylast=True)  # inside pytest-asyncio's wrapper: it sees the mark added here
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, object, object]:
    """Mark ``asyncio`` (a loop per test) the async tests this plugin serves, so they run whatever the project's
    pytest-asyncio mode is, without changing that mode for the project's other tests."""
    made = yield
    for node in made if isinstance(made, list) else [made]:
        if isinstance(node, pytest.Function) and serves(node) and node.get_closest_marker("asyncio") is None:
            node.add_marker(pytest.mark.asyncio(loop_scope="function"))
    return made


@pytest.hookimpl(wrapper=True, tryfirst=True)  # before pytest-asyncio's wrapper decides whether to run it
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, Any, Any]:
    """Run in the test's loop an async fixture that a served test asks for and pytest-asyncio would leave alone
    (strict mode, plain ``@pytest.fixture``): a plugin's ``transport`` fixture of a contract suite, written as
    svc's docs show it, works in any project. Fixtures pytest-asyncio already runs keep their own loop scope."""
    if (
        fixturedef.scope == "function"
        and isinstance(request.node, pytest.Function)
        and serves(request.node)
        and is_async(fixturedef.func)
        and not getattr(getattr(fixturedef.func, "__func__", fixturedef.func), "_force_asyncio_fixture", False)
    ):
        pytest_asyncio.fixture(fixturedef.func, loop_scope="function")  # marks the function for pytest-asyncio
    return (yield)


def in_ci() -> bool:
    """CI sets ``CI=true``; there a test that needs the dev cluster must run, never skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip_or_fail(reason: str) -> None:
    """Skip on a developer machine; fail under CI, where a skipped integration test hides a broken setup."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: integration tests must run)")
    pytest.skip(reason)


def isolated_home(tmp_path: Path) -> Path:
    """The HOME ``svc_isolated_home`` gives a test; ``svc_paths``' user config directory is the one svc finds there,
    so an SSH profile ``svc_cli("profile", "add", ...)`` writes is the test host's too."""
    return tmp_path / "home"


@pytest.fixture
def svc_isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test as a fresh user: HOME, XDG dirs and the system config under ``tmp_path``, no ``SVC_*`` or
    ``CHAT_WEBHOOK_URL`` variables but ``SVC_AGENT=off`` (no command leaves a background agent running), cwd
    ``tmp_path / "work"``. Use it with ``@pytest.mark.usefixtures`` or
    from an autouse fixture of your conftest; returns the new HOME."""
    for key in [key for key in os.environ if key.startswith("SVC_") or key == "CHAT_WEBHOOK_URL"]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("SVC_AGENT", "off")
    home = isolated_home(tmp_path)
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("SVC_SYSTEM_CONFIG", str(tmp_path / "etc" / "config.json"))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)
    return home


@pytest.fixture
def svc_plugin_manager() -> PluginManager:
    """A fresh, strict plugin manager with the host's built-ins and no entry points."""
    from svc_host.plugin_core.manager import create_plugin_manager

    return create_plugin_manager(strict=True, entry_points_too=False)


@pytest.fixture
def svc_installed_plugins() -> PluginManager:
    """A fresh, strict plugin manager with the host's built-ins and every installed entry point of group ``svc``:
    what ``svc`` builds, except that a plugin failing to load is an error. To run ``svc_test_host`` and the clients
    around it with your plugin found through its entry point, use it as ``svc_plugin_manager`` in your conftest::

        @pytest.fixture
        def svc_plugin_manager(svc_installed_plugins):
            return svc_installed_plugins
    """
    from svc_host.plugin_core.manager import create_plugin_manager

    return create_plugin_manager(strict=True)


@pytest.fixture
def svc_register_plugin(svc_plugin_manager: PluginManager) -> Callable[..., None]:
    """Register a module or object with hookimpls into ``svc_plugin_manager``: ``svc_register_plugin(obj, "name")``."""

    def _register(plugin: object, name: str | None = None, **kwargs: Any) -> None:
        svc_plugin_manager.register(plugin, name or str(getattr(plugin, "__name__", repr(plugin))), **kwargs)

    return _register


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    """A reachable Slurm controller on this machine (``sinfo`` answers), or skip (fail under CI)."""
    if shutil.which("sinfo") is None:
        skip_or_fail("Slurm is not installed (run scripts/devcluster up)")
    probe = subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, text=True, timeout=30, check=False)
    if probe.returncode != 0:
        skip_or_fail(f"Slurm does not answer: {probe.stderr.strip()}")


@pytest.fixture
def svc_paths(tmp_path: Path) -> SvcPaths:
    """Config, state and project directories under ``tmp_path`` (nothing of the real user's is touched). The
    system config file and the user config directory (config, SSH profiles) are the ones ``svc_isolated_home``
    makes svc read, so ``svc_test_host`` and the ``svc`` commands ``svc_cli`` runs share them."""
    from svc_host.settings.paths import SvcPaths

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return SvcPaths(
        system_config=tmp_path / "etc" / "config.json",
        user_config_dir=isolated_home(tmp_path) / ".config" / "svc",
        state_dir=tmp_path / "state",
        project_dir=project,
    )


@pytest.fixture
def svc_database_url(svc_paths: SvcPaths) -> str:
    """The store of ``svc_test_host``: SQLite in ``svc_paths``' state directory. Override it (with a
    ``postgresql://`` URL of a database or schema of the test's own) to run tests on PostgreSQL."""
    return f"sqlite:///{svc_paths.state_dir / 'svc.db'}"


@pytest_asyncio.fixture(loop_scope="function")
async def svc_test_host(
    svc_plugin_manager: PluginManager, svc_paths: SvcPaths, svc_database_url: str
) -> AsyncIterator[Host]:
    """A ``Host`` on ``svc_paths`` and ``svc_database_url`` with ``svc_plugin_manager`` (add plugins with
    ``svc_register_plugin`` first). Closed after the test in the test's event loop: its monitor, services,
    transports and store, so nothing it started is left for the loop's shutdown to cancel half-way."""
    from svc_host.host import Host
    from svc_host.settings.profiles import ProfileStore
    from svc_host.store.database import Store

    made = Host(
        paths=svc_paths,
        plugins=svc_plugin_manager,
        profiles=ProfileStore(svc_paths.profiles_file),
        store=Store(svc_database_url),
        source="web",
        read_env=False,
    )
    yield made
    await made.close()


SVC_HOST_ALIAS_WARNED = pytest.StashKey[bool]()
"""Set once the deprecated ``svc_host`` fixture has warned in this run: it warns once, not in every test."""


@pytest.fixture
def svc_host(svc_test_host: Host, request: pytest.FixtureRequest) -> Host:
    """Deprecated alias of ``svc_test_host`` (plugin API 1.2.0; goes in 2.0): a fixture named like the package
    shadows ``svc_host`` inside every test that asks for it."""
    if not request.config.stash.get(SVC_HOST_ALIAS_WARNED, False):
        request.config.stash[SVC_HOST_ALIAS_WARNED] = True
        warnings.warn(
            "the svc_host fixture is deprecated (plugin API 1.2.0) and goes in 2.0: ask for svc_test_host",
            DeprecationWarning,
            stacklevel=2,
        )
    return svc_test_host


@pytest_asyncio.fixture(loop_scope="function")
async def svc_api_client(svc_test_host: Host) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for the REST app built around ``svc_test_host`` (in-process, no server socket), sending the
    test server's token (``svc_host.testing.http``)."""
    from svc_host.api.app import create_app
    from svc_host.testing.http import asgi_client, security_for_tests

    async with asgi_client(create_app(svc_test_host, security=security_for_tests())) as client:
        yield client


@pytest.fixture
def svc_mcp_client(svc_test_host: Host) -> Callable[[], AbstractAsyncContextManager[Client]]:
    """``async with svc_mcp_client() as client:`` an MCP client session with the server built around
    ``svc_test_host`` (in memory; the server starts and closes the host). A factory rather than a yield fixture:
    the client's task group must be entered and left in the test's own task."""
    from mcp import Client

    from svc_host.mcp.server import create_server

    return lambda: Client(create_server(svc_test_host))


@pytest.fixture
def svc_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``svc_cli("plugins", "--json")`` runs the installed ``svc`` command in a fresh process (entry points and
    all, with this test's environment and cwd) and returns its ``CompletedProcess`` (text; never raises)."""

    def run(*args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "svc_host", *args],
            capture_output=True,
            text=True,
            input=input,
            timeout=timeout,
            check=False,
        )

    return run
