"""GPUs per type in the browser: the overview and the resources page show, for the whole cluster and each
partition, "a100: 1 of 2 free · v100: 2 of 2 free", and count a node that sits in two partitions once; the
submit page offers the chosen partition's GPU types and renders ``--gres=gpu:TYPE:N``. The dev cluster's GPUs
have no type, so the typed cluster is a fake transport (two nodes, each in two partitions) behind a real
uvicorn server in a thread of its own; the last test checks the dev cluster's untyped GPUs on a real server.
Light and dark screenshots go to docs/screenshots/."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import pytest

from svc_host import hookimpl
from svc_host.domain.resources import NodeInfo
from svc_host.plugin_core.records import TransportSpec
from svc_host.testing.fake import FakeTransport
from svc_host.testing.http import TEST_API_TOKEN
from tests.web.conftest import VIEWPORT, open_page, shot

if TYPE_CHECKING:
    import uvicorn
    from playwright.sync_api import Browser, Page, ViewportSize

    from tests.web.conftest import Server


def node(name: str, partition: str, kind: str, used: int) -> NodeInfo:
    state = "mixed" if used else "idle"
    return NodeInfo(
        name=name,
        partition=partition,
        raw_state=state,
        cpus=32,
        gpus_total=2,
        gpus_used=used,
        gpu_types={kind: 2},
        gpu_types_used={kind: used} if used else {},
    )


# g1 (2 a100, one in use) sits in gpu and long; g2 (2 v100, free) in gpu and debug. Summed per partition that
# is 6 of 8 GPUs free; the cluster has 3 of 4.
NODES = [
    node("g1", "gpu", "a100", 1),
    node("g1", "long", "a100", 1),
    node("g2", "gpu", "v100", 0),
    node("g2", "debug", "v100", 0),
]
BOTH = "a100: 1 of 2 free · v100: 2 of 2 free"


class TypedServer:
    """A real uvicorn server, in a thread with its own event loop, around a Host whose ``local`` transport is
    ``FakeTransport(nodes=NODES)``: the browser drives it while the test's thread stays free of a loop."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fake = FakeTransport("local", nodes=NODES)
        self.server: uvicorn.Server | None = None
        self.base = ""
        self.thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name="typed-gpu-server", daemon=True)

    async def _serve(self) -> None:
        import uvicorn

        from svc_host.api.app import create_app
        from svc_host.host import Host
        from svc_host.plugin_core.manager import create_plugin_manager
        from svc_host.settings.paths import SvcPaths
        from svc_host.settings.profiles import ProfileStore
        from svc_host.store.database import Store
        from svc_host.testing.http import security_for_tests

        plugins = create_plugin_manager(strict=True, entry_points_too=False)
        fake = self.fake
        plugins.register(
            SimpleNamespace(svc_transports=hookimpl(lambda config: [TransportSpec("local", lambda: fake)])),
            "typed-gpus",
        )
        (self.root / "project").mkdir(exist_ok=True)
        paths = SvcPaths(
            system_config=self.root / "etc" / "config.json",
            user_config_dir=self.root / "config",
            state_dir=self.root / "state",
            project_dir=self.root / "project",
        )
        host = Host(
            paths=paths,
            plugins=plugins,
            profiles=ProfileStore(paths.profiles_file),
            store=Store(f"sqlite:///{paths.state_dir / 'svc.db'}"),
            source="web",
            read_env=False,
        )
        app = create_app(host, security=security_for_tests())
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        await self.server.serve()

    def start(self) -> None:
        """Start the thread and wait (30 s at most) until the server listens; ``base`` is then its URL."""
        self.thread.start()
        for _ in range(300):
            if self.server is not None and self.server.started:
                self.base = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"
                return
            if not self.thread.is_alive():
                break
            self.thread.join(0.1)
        raise AssertionError("the typed-GPU server did not start (pytest reports its thread's exception)")

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture(scope="module")
def typed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TypedServer]:
    server = TypedServer(tmp_path_factory.mktemp("typed-gpus"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def typed_page(browser: Browser, typed_server: TypedServer) -> Iterator[Page]:
    context = browser.new_context(viewport=cast("ViewportSize", VIEWPORT), base_url=typed_server.base, bypass_csp=True)
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login = page.request.post("/api/auth/login", data={"token": TEST_API_TOKEN})
    assert login.status == 204, login.text()
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def test_the_overview_counts_each_gpu_once_and_shows_gpus_per_type(typed_page: Page) -> None:
    from playwright.sync_api import expect

    open_page(typed_page, "/")
    free = typed_page.locator(".stat", has_text="GPUs free")
    expect(free.locator(".stat-value")).to_have_text("3 / 4")  # summing the partitions said 6 / 8
    whole = typed_page.locator(".gauge-whole")
    expect(whole.locator(".gauge-detail")).to_have_text("1 / 4 GPUs in use")
    expect(whole.locator(".gpu-types")).to_have_text(BOTH)
    lines = {name: typed_page.locator(f"[data-partition={name}] .gpu-types") for name in ("gpu", "long", "debug")}
    expect(lines["gpu"]).to_have_text(BOTH)
    expect(lines["long"]).to_have_text("a100: 1 of 2 free")
    expect(lines["debug"]).to_have_text("v100: 2 of 2 free")
    shot(typed_page, "overview-gpu-types")


def test_the_resources_page_shows_the_whole_cluster_and_each_partition_per_type(typed_page: Page) -> None:
    from playwright.sync_api import expect

    open_page(typed_page, "/resources")
    cards = typed_page.locator(".partition-card")
    expect(cards.first.locator(".partition-name")).to_contain_text("Whole cluster")
    expect(cards.first.locator(".gauge-detail").first).to_have_text("1 of 4 in use · 25%")
    expect(cards.first.locator(".gpu-types")).to_have_text(BOTH)
    expect(typed_page.locator(".partition-card[data-partition=long] .gpu-types")).to_have_text("a100: 1 of 2 free")
    expect(typed_page.locator(".partition-card[data-partition=debug] .gpu-types")).to_have_text("v100: 2 of 2 free")
    shot(typed_page, "resources-gpu-types")


def test_submit_offers_the_partitions_gpu_types_and_renders_the_typed_gres(
    typed_page: Page, typed_server: TypedServer
) -> None:
    from playwright.sync_api import expect

    open_page(typed_page, "/submit")
    gpu_type = typed_page.locator("select[name=gpu_type]")
    options = gpu_type.locator("option")
    expect(options).to_have_text(["any", "a100 — 1/2 free", "v100 — 2/2 free"])  # the cluster default: all types
    typed_page.select_option("select[name=partition]", "long")
    expect(options).to_have_text(["any", "a100 — 1/2 free"])
    typed_page.select_option("select[name=gpu_type]", "a100")
    typed_page.fill("input[name=gpus_per_node]", "2")
    typed_page.fill("textarea[name=command]", "python train.py")
    preview = typed_page.locator("#script-preview")
    expect(preview).to_contain_text("#SBATCH --gres=gpu:a100:2")
    shot(typed_page, "submit-gpu-type")

    typed_page.select_option("select[name=partition]", "debug")  # no a100 there: back to "any"
    expect(options).to_have_text(["any", "v100 — 2/2 free"])
    expect(gpu_type).to_have_value("")
    expect(preview).to_contain_text("#SBATCH --gres=gpu:2")
    typed_page.select_option("select[name=gpu_type]", "v100")
    expect(preview).to_contain_text("#SBATCH --gres=gpu:v100:2")
    typed_page.click("#submit-job")
    typed_page.wait_for_url(re.compile(r"/jobs/\d+"))
    (script,) = typed_server.fake.scripts.values()
    assert "#SBATCH --gres=gpu:v100:2" in script.text


def test_the_dev_clusters_untyped_gpus_show_as_before(page: Page, svc_server: Server) -> None:
    from playwright.sync_api import expect

    open_page(page, "/")
    # One node with gpu:4 in both debug and gpu: the cluster has 4 GPUs, not 8, and no line per type.
    expect(page.locator(".stat", has_text="GPUs free").locator(".stat-value")).to_have_text(re.compile(r"^\d / 4$"))
    expect(page.locator(".gauge-whole .gauge-detail")).to_have_text(re.compile(r"^\d / 4 GPUs in use$"))
    expect(page.locator("[data-partition=gpu] .gauge-detail")).to_have_text(re.compile(r"^\d / 4 GPUs in use$"))
    expect(page.locator(".gpu-types")).to_have_count(0)
    open_page(page, "/resources")
    expect(page.locator(".partition-card[data-partition=gpu]")).to_be_visible()
    expect(page.locator(".gpu-types")).to_have_count(0)
    open_page(page, "/submit")
    expect(page.locator("select[name=gpu_type]")).to_be_disabled()
    expect(page.locator("select[name=gpu_type] option")).to_have_text(["any"])
