"""The Sessions page in a real browser on the dev cluster (local): a command session started from the form becomes
ready live, Open shows the app from the sessions' own origin (whose pages cannot read the dashboard's API with its
login), Stop ends it ``stopped``; a bad field is said under it with nothing started; and the issue's "done when":
JupyterLab with one GPU started from the page, opened, a notebook cell ``print(6*7)`` run through the kernel, ``42``
read in JupyterLab's own UI."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from svc_host.testing.plugin import HOLDS_GPUS, skip_or_fail
from svc_host.testing.serve import free_port, isolated_env, start_serve
from svc_host.testing.waiting import eventually_blocking
from tests.web.conftest import TOKEN, Server, add_dev_profile, open_page

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Locator, Page

pytestmark = [pytest.mark.slow]

"""The dev clusters' venv with JupyterLab (docs/clusters.md)."""
DEV_CLUSTERS = {"22.05": ("status", "env", "SVC_DEV_"), "24.11": ("status24", "env24", "SVC_DEV24_")}
"""Slurm version -> the ``scripts/devcluster`` commands saying whether its dev cluster is up and its facts."""
READY_WAIT = 240_000
"""Milliseconds a session may take from the Start click to ready: its job may queue behind other tests' jobs."""
JUPYTER_WAIT = 120_000
"""Milliseconds JupyterLab's UI may take to draw, start a kernel and show a cell's output on a loaded machine."""


IDLE_KIND_PLUGIN = '''"""A session kind that ends after one idle minute (warned at 48 s): the page's idle warning."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from svc_host.plugin import AppLaunch, SessionKindSpec, hookimpl

SVC_PLUGIN_API = ">=1.1,<2"


class Fields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1)


def launch(fields: Fields) -> AppLaunch:
    return AppLaunch(argv=["bash", "-lc", fields.command], env={"SVC_SESSION_PORT": "{port}"}, strip_base_path=True)


@hookimpl
def svc_session_kinds() -> list[SessionKindSpec]:
    return [
        SessionKindSpec(
            name="idle-minute", description="ends after a minute without traffic", fields=Fields, launch=launch,
            idle_minutes=1,
        )
    ]
'''


def idle_kind_site(root: Path) -> Path:
    """A directory for ``PYTHONPATH`` holding a plugin offering the ``idle-minute`` kind, installed as pip would (a
    ``*.dist-info`` with its ``svc`` entry point): ``svc serve`` loads it as any plugin."""
    site = root / "site"
    info = site / "svc_test_idle_kind-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: svc-test-idle-kind\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[svc]\nidle-minute = svc_test_idle_kind\n")
    (site / "svc_test_idle_kind.py").write_text(IDLE_KIND_PLUGIN)
    return site


class SessionsServer(Server):
    """``svc serve`` with its sessions' origin on a port of its own choosing (not left to ``--port`` + 1)."""

    sessions_port: int


@pytest.fixture(scope="module")
def svc_server(slurm_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionsServer]:
    """This module's own ``svc serve`` (the browser fixtures use it): the sessions port given explicitly, so the
    sessions are never off because ``--port`` + 1 happened to be taken. Sessions still open at the end are stopped
    (their jobs would outlive the server). A plugin of the test's own offers a kind with a one-minute idle timeout."""
    root = tmp_path_factory.mktemp("sessions-server")
    work = root / "work"
    work.mkdir()
    env = isolated_env(root, token=TOKEN)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(idle_kind_site(root)), env.get("PYTHONPATH")]))
    sessions_port = free_port()
    with (root / "serve.log").open("w") as log:
        try:
            running = start_serve(
                "--sessions-port", str(sessions_port), base_env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT
            )
        except RuntimeError as exc:
            raise AssertionError(f"{exc}: {(root / 'serve.log').read_text()}") from None
        server = SessionsServer(running.base, env, running.process, root / "serve.log")
        server.sessions_port = sessions_port
        try:
            yield server
        finally:
            for session in server.api("GET", "/api/sessions"):
                if session["state"] != "ended":
                    server.client.delete(f"/api/sessions/{session['job_id']}", params={"transport": session["cluster"]})
            server.client.close()
            running.stop()


def sessions(server: Server) -> list[dict[str, Any]]:
    return list(server.api("GET", "/api/sessions"))


def start_from_form(
    page: Page, kind: str, fields: dict[str, str], *, gpus: str = "", time_limit: str = "", cluster: str = "local"
) -> None:
    """Fill the "Start a session" form as a person does and press Start."""
    form = page.locator("form.session-form")
    form.locator("select[name=session-cluster]").select_option(cluster)
    form.locator("select[name=kind]").select_option(kind)
    for name, value in fields.items():
        form.locator(f'[name="fields.{name}"]').fill(value)
    form.locator("input[name=gpus]").fill(gpus)
    if time_limit:
        form.locator("input[name=time_limit]").fill(time_limit)
    form.locator(f"button:text-is('Start on {cluster}')").click()


def newest_session(server: Server, count_before: int) -> dict[str, Any]:
    """The session the form just started (the list is newest first)."""
    listed = eventually_blocking(lambda: sessions(server), until=lambda rows: len(rows) > count_before)
    return listed[0]


def session_row(page: Page, job_id: str, cluster: str = "local") -> Locator:
    return page.locator(f'table.sessions tr[data-session="{cluster}/{job_id}"]')


def field_error(page: Page, control: str) -> str:
    """The words under a control (its `.field` holds them)."""
    from playwright.sync_api import expect

    note = page.locator(f".field:has({control}) .field-error")
    expect(note).to_be_visible()
    return note.inner_text()


def test_a_command_session_starts_live_opens_on_its_own_origin_and_stops(
    page: Page, svc_server: SessionsServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    served = tmp_path / "served"
    served.mkdir()
    (served / "hello-from-the-session.txt").write_text("hello\n")
    open_page(page, "/sessions")
    expect(page.locator("a.nav-link[data-nav=sessions]")).to_have_class("nav-link active")
    page.evaluate("window.svcNotReloaded = true")  # gone if the page reloads: every change below must come live
    before = len(sessions(svc_server))
    command = f"cd {served} && exec python3 -m http.server $SVC_SESSION_PORT --bind 127.0.0.1"
    start_from_form(page, "command", {"command": command}, time_limit="15:00")
    job_id = newest_session(svc_server, before)["job_id"]
    row = session_row(page, job_id)
    expect(row).to_be_visible()
    expect(row.locator("td").first).to_contain_text("command")
    expect(row.locator(".cluster-chip")).to_have_text("local")
    expect(row.locator("a.job-link")).to_have_attribute("href", f"/jobs/{job_id}?cluster=local")

    expect(row).to_have_attribute("data-state", "ready", timeout=READY_WAIT)
    expect(row.locator(".badge")).to_have_text("ready")
    expect(row.locator("td").nth(4)).not_to_have_text("—")  # the node it runs on
    left = row.locator(".time-left")
    shown = left.inner_text()
    assert re.fullmatch(r"1[0-5]m \d\ds", shown), shown
    expect(left).not_to_have_text(shown, timeout=10_000)  # time left ticks in the browser
    assert page.evaluate("window.svcNotReloaded") is True

    with page.context.expect_page() as opened:
        row.locator("button:text-is('Open')").click()
    tab = opened.value
    origin = f"http://127.0.0.1:{svc_server.sessions_port}"
    expect(tab.locator("body")).to_contain_text("hello-from-the-session.txt", timeout=60_000)
    assert tab.url == f"{origin}/s/local/{job_id}/", tab.url  # the one-time code is gone from the address
    assert tab.evaluate("window.opener") is None  # the session's page cannot reach back into the dashboard's tab

    # A page of the session asks the dashboard's API with the browser's cookies (the dashboard's login among
    # them: cookies are per host, not per port): refused.
    answer = tab.evaluate(
        """async (url) => {
          try {
            const response = await fetch(url, { credentials: 'include' });
            return { status: response.status };
          } catch (err) {
            return { error: String(err) };
          }
        }""",
        f"{svc_server.base}/api/jobs",
    )
    assert answer.get("status") != 200, answer
    tab.close()

    row.locator("button:text-is('Stop')").click()
    dialog = page.locator("dialog.dialog")
    expect(dialog).to_contain_text(f"Stop session {job_id}?")
    dialog.locator("button:text-is('Stop session')").click()
    expect(row).to_have_attribute("data-state", "ended", timeout=60_000)
    expect(row.locator(".end-reason")).to_have_text("stopped")
    expect(row.locator("button")).to_have_count(0)  # neither Open nor Stop once it ended
    expect(row.locator(".time-left")).to_have_text("—")
    assert page.evaluate("window.svcNotReloaded") is True
    assert sessions(svc_server)[0]["end_reason"] == "stopped"


def test_a_bad_field_is_said_under_it_and_nothing_starts(page: Page, svc_server: SessionsServer) -> None:
    from playwright.sync_api import expect

    open_page(page, "/sessions")
    before = len(sessions(svc_server))
    form = page.locator("form.session-form")
    expect(form.locator("select[name=kind]")).to_have_value("jupyter")  # what most people come for
    start_from_form(page, "command", {"command": ""})
    words = field_error(page, 'textarea[name="fields.command"]')
    assert words == "Is required", words
    expect(form.locator('textarea[name="fields.command"]')).to_be_focused()
    expect(form.locator('textarea[name="fields.command"]')).to_have_attribute("aria-invalid", "true")
    expect(form.locator("label:has-text('Command') .req")).to_have_text("*")  # the required mark

    form.locator('textarea[name="fields.command"]').fill("exec python3 -m http.server $SVC_SESSION_PORT")
    expect(form.locator(".field-error")).to_have_count(0)  # typing clears the field's error
    form.locator("input[name=gpus]").fill("two")
    form.locator("button:text-is('Start on local')").click()
    assert field_error(page, "input[name=gpus]") == "N or TYPE:N, like 1 or a100:1"
    expect(form.locator("input[name=gpus]")).to_be_focused()

    form.locator("input[name=gpus]").fill("")
    form.locator("select[name=kind]").select_option("tensorboard")  # its form: a required log directory
    expect(form.locator("label:has-text('Logdir') .req")).to_be_visible()
    form.locator("button:text-is('Start on local')").click()
    assert field_error(page, 'input[name="fields.logdir"]') == "Is required"
    assert "body." not in form.inner_text()
    assert len(sessions(svc_server)) == before  # refused: nothing started


def dev_cluster_facts(version: str) -> dict[str, str]:
    """``scripts/devcluster env`` (22.05) or ``env24`` (24.11) under the same ``SVC_DEV_*`` keys; the cluster must be
    up (skipped, or failed under CI, when not)."""
    status, env, prefix = {"22.05": ("status", "env", "SVC_DEV_"), "24.11": ("status24", "env24", "SVC_DEV24_")}[
        version
    ]
    script = Path(__file__).resolve().parents[2] / "scripts" / "devcluster"
    up = subprocess.run([script, status], capture_output=True, text=True, check=False)
    if up.returncode != 0:
        skip_or_fail(f"the {version} dev cluster is not up (scripts/devcluster {status}): {up.stdout}{up.stderr}")
    out = subprocess.run([script, env], capture_output=True, text=True, check=True).stdout
    facts = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return {"SVC_DEV_" + key.removeprefix(prefix): value for key, value in facts.items() if key.startswith(prefix)}


def run_a_cell_in_jupyterlab(page: Page, server: SessionsServer, cluster: str, version: str) -> Locator:
    """Start JupyterLab with one GPU from the page on ``cluster`` (the dev cluster of Slurm ``version`` through its
    SSH profile, user svcdev), open it, run ``print(6*7)`` in a new notebook and read ``42``; its row on the page.

    Over SSH, not the local transport: the local transport's jobs run as root on this machine, and JupyterLab will
    not. The way in then goes through the held SSH connection, as from a laptop."""
    from playwright.sync_api import expect

    if cluster not in server.api("GET", "/api/config/ssh/profiles"):  # {name: profile}
        add_dev_profile(server, dev_cluster_facts(version), cluster)
    open_page(page, "/sessions")
    before = len(sessions(server))
    # Venv left empty, as a new user leaves it: the dev clusters have jupyter on every job's PATH, like a site that
    # installs it for everyone (scripts/devapps)
    start_from_form(page, "jupyter", {}, gpus="1", time_limit="30:00", cluster=cluster)
    started = newest_session(server, before)
    assert (started["kind"], started["cluster"]) == ("jupyter", cluster)
    row = session_row(page, started["job_id"], cluster)
    expect(row).to_have_attribute("data-state", "ready", timeout=READY_WAIT)

    with page.context.expect_page() as opened:
        row.locator("button:text-is('Open')").click()
    lab = opened.value
    lab.set_default_timeout(JUPYTER_WAIT)
    entry = f"http://127.0.0.1:{server.sessions_port}/s/{cluster}/{started['job_id']}/lab"
    lab.wait_for_url(re.compile(rf"^{re.escape(entry)}"))  # the one-time link, traded for the session's cookie
    # JupyterLab opens in the home directory and restores the layout an earlier session there left (a notebook tab
    # instead of the launcher): ?reset starts from the default layout, the launcher
    lab.goto(f"{entry}?reset")
    lab.locator('.jp-LauncherCard[data-category="Notebook"]').first.click()  # "Python 3 (ipykernel)"
    # the notebook is drawn, its kernel started (over the kernel's WebSocket) and the notebook settled: only then is
    # a click on the cell sure to leave the focus in its editor (typed into command mode, the keys are shortcuts)
    expect(lab.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle")
    cell = lab.locator(".jp-Notebook .jp-Cell").first
    cell.locator(".cm-content").click()
    expect(cell.locator(".cm-editor")).to_have_class(re.compile(r"\bcm-focused\b"))
    lab.keyboard.type("print(6*7)")
    expect(cell.locator(".cm-content")).to_have_text("print(6*7)")
    lab.keyboard.press("Shift+Enter")
    expect(cell.locator(".jp-OutputArea-output")).to_have_text("42", timeout=JUPYTER_WAIT)
    lab.close()
    page.bring_to_front()
    return row


@HOLDS_GPUS
def test_jupyterlab_with_one_gpu_from_the_page_runs_a_cell(
    page: Page, svc_server: SessionsServer, screenshot: Callable[[Page, str], None]
) -> None:
    """The issue's "done when" on the 22.05 dev cluster, and the page's screenshots."""
    from playwright.sync_api import expect

    # an ended session beside it in the list (the screenshot shows both): an app that exits with a message
    failing = svc_server.api(
        "POST",
        "/api/sessions",
        json={
            "kind": "command",
            "fields": {"command": "echo 'serve.py: no such file: checkpoints/model-final.pt' >&2; exit 3"},
            "time_limit": "5:00",
        },
    )
    # and one whose program is not on the node (a first JupyterLab without its Venv): the row says what to give
    missing = svc_server.api(
        "POST",
        "/api/sessions",
        json={"kind": "command", "fields": {"command": "no-such-app --port $SVC_SESSION_PORT"}, "time_limit": "5:00"},
    )
    row = run_a_cell_in_jupyterlab(page, svc_server, "lab22", "22.05")
    ended = session_row(page, failing["job_id"])
    expect(ended).to_have_attribute("data-state", "ended", timeout=READY_WAIT)
    expect(ended.locator(".end-reason")).to_have_text("the app exited")
    ended.locator(".end-detail summary").click()
    expect(ended.locator(".end-detail pre")).to_contain_text("no such file: checkpoints/model-final.pt")
    expect(ended.locator(".end-hint")).to_have_count(0)  # it ran, and said why it stopped
    not_found = session_row(page, missing["job_id"])
    expect(not_found).to_have_attribute("data-state", "ended", timeout=READY_WAIT)
    expect(not_found.locator(".end-hint")).to_have_text(
        "its program was not found on the node: give the environment that has it (Venv), or check the command"
    )

    expect(row.locator("button:text-is('Open')")).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")
    page.mouse.move(0, 0)  # no row under the pointer (its hover colour) in the pictures
    screenshot(page, "sessions")
    page.set_viewport_size({"width": 900, "height": 800})  # the sidebar folds away; a wide table scrolls in its card
    expect(page.locator("#nav-toggle")).to_be_visible()
    card = page.locator(".sessions-card").bounding_box()
    assert card is not None
    assert card["x"] + card["width"] <= 900, card
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the page never scrolls sideways"


@HOLDS_GPUS
def test_jupyterlab_on_the_24_11_cluster_runs_a_cell(page: Page, svc_server: SessionsServer) -> None:
    """The same on the 24.11 dev cluster (its chroot's sshd, node node24), from the same page."""
    from playwright.sync_api import expect

    row = run_a_cell_in_jupyterlab(page, svc_server, "lab24", "24.11")
    row.locator("button:text-is('Stop')").click()
    page.locator("dialog.dialog button:text-is('Stop session')").click()
    expect(row).to_have_attribute("data-state", "ended", timeout=60_000)


def test_an_idle_session_is_warned_on_its_row_then_ends_idle(page: Page, svc_server: SessionsServer) -> None:
    from playwright.sync_api import expect

    open_page(page, "/sessions")
    before = len(sessions(svc_server))
    start_from_form(page, "idle-minute", {"command": "exec python3 -m http.server $SVC_SESSION_PORT --bind 127.0.0.1"})
    job_id = newest_session(svc_server, before)["job_id"]
    row = session_row(page, job_id)
    expect(row).to_have_attribute("data-state", "ready", timeout=READY_WAIT)
    expect(row.locator(".idle-warning")).to_have_count(0)
    # no traffic: warned at 80 % of its minute (the session.idle_warning event redraws the row), ended at 100 %
    warning = row.locator(".idle-warning")
    expect(warning).to_be_visible(timeout=120_000)
    expect(warning).to_have_text(re.compile(r"^Idle: it ends in \d+s unless used$"))
    expect(row).to_have_attribute("data-state", "ended", timeout=120_000)
    expect(row.locator(".end-reason")).to_have_text("idle timeout")
    expect(row.locator(".idle-warning")).to_have_count(0)


def test_a_session_that_cannot_start_says_why_and_stops_while_queued(page: Page, svc_server: SessionsServer) -> None:
    from playwright.sync_api import expect

    open_page(page, "/sessions")
    before = len(sessions(svc_server))
    page.locator("form.session-form select[name=partition]").select_option("short")  # MaxTime 5 minutes
    start_from_form(page, "command", {"command": "exec python3 -m http.server $SVC_SESSION_PORT"}, time_limit="10:00")
    job_id = newest_session(svc_server, before)["job_id"]
    row = session_row(page, job_id)
    expect(row).to_have_attribute("data-state", "queued")
    # Slurm's reason (PartitionTimeLimit; PartitionConfig while another test changes the partition), with the
    # pending API's sentence about the job on it
    expect(row.locator(".pending-reason")).to_have_text(re.compile(r"^Partition[A-Za-z]+$"), timeout=60_000)
    expect(row.locator(".pending-line")).to_have_attribute("title", re.compile(rf"\b[Jj]ob {job_id}\b"))
    expect(row.locator(".time-left")).to_have_text("10m 00s")  # counts from the job's start: not yet
    expect(row.locator("button:text-is('Open')")).to_have_count(0)
    row.locator("button:text-is('Stop')").click()
    page.locator("dialog.dialog button:text-is('Stop session')").click()
    expect(row).to_have_attribute("data-state", "ended", timeout=60_000)
    expect(row.locator(".end-reason")).to_have_text("stopped")


def test_a_kinds_form_takes_every_field_type_its_schema_may_give(page: Page, svc_server: SessionsServer) -> None:
    """Built-in kinds use strings and a boolean; a plugin's form may also have numbers and choices (an Enum is a
    ``$ref`` in pydantic's schema): each becomes its control, with its default, and an empty optional field is left
    out of the request (the kind's default applies)."""
    open_page(page, "/sessions")
    drawn = page.evaluate(
        """async () => {
          const { schemaControls } = await import('/static/js/pages/sessions.js');
          const schema = {
            properties: {
              dtype: { $ref: '#/$defs/Precision', default: 'bf16', description: 'how numbers are kept' },
              port_offset: { anyOf: [{ type: 'integer', minimum: 0, maximum: 9 }, { type: 'null' }], default: null },
              workers: { type: 'integer', minimum: 1, maximum: 64, default: 4 },
              debug: { type: 'boolean', default: false },
              model: { type: 'string', maxLength: 200 },
            },
            required: ['model'],
            $defs: { Precision: { enum: ['fp32', 'bf16'], title: 'Precision', type: 'string' } },
          };
          const controls = schemaControls(schema);
          const box = document.createElement('form');
          box.append(...controls.map((c) => c.element));
          document.body.append(box);
          const read = () => Object.fromEntries(controls.map((c) => [c.key, c.read() ?? null]));
          const before = read();
          box.querySelector('[name="fields.model"]').value = 'llama';
          box.querySelector('[name="fields.port_offset"]').value = '3';
          box.querySelector('[name="fields.debug"]').checked = true;
          const after = read();
          const info = (name) => {
            const el = box.querySelector(`[name="fields.${name}"]`);
            return { tag: el.tagName, type: el.type, min: el.min, max: el.max, required: el.required,
              options: el.options ? [...el.options].map((o) => o.value) : null,
              label: el.closest('.field').querySelector('label').textContent };
          };
          const shown = Object.fromEntries(Object.keys(schema.properties).map((k) => [k, info(k)]));
          box.remove();
          return { before, after, shown };
        }"""
    )
    assert drawn["before"] == {"dtype": "bf16", "port_offset": None, "workers": 4, "debug": False, "model": None}
    assert drawn["after"] == {"dtype": "bf16", "port_offset": 3, "workers": 4, "debug": True, "model": "llama"}
    shown = drawn["shown"]
    assert (shown["dtype"]["tag"], shown["dtype"]["options"], shown["dtype"]["label"]) == (
        "SELECT",
        ["", "fp32", "bf16"],
        "Dtype",  # the field's name, not its type's
    )
    assert (shown["workers"]["type"], shown["workers"]["min"], shown["workers"]["max"]) == ("number", "1", "64")
    assert (shown["port_offset"]["type"], shown["port_offset"]["max"]) == ("number", "9")
    assert shown["debug"]["type"] == "checkbox"
    assert (shown["model"]["tag"], shown["model"]["required"], shown["model"]["label"]) == ("INPUT", True, "Model *")
    assert shown["port_offset"]["label"] == "Port offset"
