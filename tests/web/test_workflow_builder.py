"""The visual workflow builder at 1280 px, where the graph is drawn scaled: a drop lands on the job under the
pointer, the view zooms and fits, a dependency cycle is drawn with its closing edge in red (no console error),
"Runs after" never offers a job's descendants, unsaved edits are not lost without a prompt, and "+ Add job" adds
an independent job."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tests.web.test_workflows_page import open_sample

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Dialog, Page


def console_errors(page: Page) -> list[str]:
    """The page's console errors from now on (a NaN in an SVG attribute is one)."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    return errors


def centre(page: Page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag(page: Page, start: tuple[float, float], end: tuple[float, float]) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=8)
    page.mouse.up()


def test_a_drop_on_the_scaled_graph_lands_on_the_job_under_the_pointer(page: Page) -> None:
    from playwright.sync_api import expect

    open_sample(page, "dropped")
    expect(page.locator(".dag-node")).to_have_count(4)
    scale = page.evaluate(
        "(() => { const svg = document.querySelector('.dag svg');"
        " return svg.getBoundingClientRect().width / svg.viewBox.baseVal.width; })()"
    )
    assert scale < 0.95, f"the graph is drawn at scale {scale}: this test needs it scaled down"
    # the far column, where scaled and unscaled positions are a node apart
    drag(page, centre(page, ".dag-node[data-name=prepare] .dag-handle"), centre(page, ".dag-node[data-name=join] rect"))
    expect(page.locator(".dag-edge[data-from=prepare][data-to=join]")).to_have_count(1)
    expect(page.locator(".code-input")).to_have_value(
        "name: dropped\nargs:\n  message: hello\njobs:\n  - name: prepare\n"
        '    command: "echo {{ message }} from prepare; sleep 2"\n'
        '  - name: left\n    command: [bash, "-c", "echo left branch; sleep 3"]\n    depends_on: [prepare]\n'
        '  - name: right\n    command: "echo right branch; sleep 3"\n    depends_on: [prepare]\n'
        "  - name: join\n    command: echo both branches done\n    depends_on: [left, right, prepare]\n"
    )


def test_the_graph_zooms_pans_and_fits_without_going_below_its_minimum_scale(page: Page) -> None:
    from playwright.sync_api import expect

    open_sample(page, "zoomed")
    dag = page.locator(".dag")
    fitted = float(dag.get_attribute("data-scale") or "0")
    assert 0.6 <= fitted < 1
    page.click("button[aria-label='Zoom in']")
    assert float(dag.get_attribute("data-scale") or "0") > fitted
    before = centre(page, ".dag-node[data-name=prepare] rect")
    box = page.locator(".dag svg").bounding_box()
    assert box is not None
    drag(page, (box["x"] + 8, box["y"] + box["height"] - 6), (box["x"] + 68, box["y"] + box["height"] - 6))
    after = centre(page, ".dag-node[data-name=prepare] rect")
    assert round(after[0] - before[0]) == 60  # the background dragged 60 px: so did the graph
    for _ in range(8):
        page.click("button[aria-label='Zoom out']")
    expect(dag).to_have_attribute("data-scale", "0.600")
    page.click("button:text-is('Fit')")
    expect(dag).to_have_attribute("data-scale", f"{fitted:.3f}")
    # a drop still lands right on a zoomed view
    page.click("button[aria-label='Zoom in']")
    drag(page, centre(page, ".dag-node[data-name=left] .dag-handle"), centre(page, ".dag-node[data-name=right] rect"))
    expect(page.locator(".dag-edge[data-from=left][data-to=right]")).to_have_count(1)


def test_a_cycle_is_drawn_with_its_closing_edge_in_red(page: Page, screenshot: Callable[[Page, str], None]) -> None:
    from playwright.sync_api import expect

    errors = console_errors(page)
    open_sample(page, "cyclic")
    text = page.input_value(".code-input").replace(
        'from prepare; sleep 2"\n', 'from prepare; sleep 2"\n    depends_on: [join]\n'
    )
    page.fill(".code-input", text)
    expect(page.locator(".validity")).to_have_text("1 problem")
    red = page.locator(".dag-edge.is-cycle")
    expect(red).to_have_count(1)
    expect(red).to_have_attribute("data-from", "join")
    expect(red).to_have_attribute("data-to", "prepare")
    assert page.evaluate("getComputedStyle(document.querySelector('.dag-edge.is-cycle')).stroke") == "rgb(209, 59, 59)"
    expect(page.locator(".dag-node")).to_have_count(4)
    columns = {
        page.locator(f".dag-node[data-name={n}]").get_attribute("transform") for n in ("prepare", "left", "join")
    }
    assert len(columns) == 3  # laid out in three columns, not collapsed into one
    assert not any("NaN" in (c or "") for c in columns)
    page.click(".dag-node[data-name=prepare]")  # the job editor offers join, ticked, so the cycle can be unticked
    expect(page.locator(".deps .dep-choice > span")).to_have_text(["join"])
    screenshot(page, "workflow-cycle")
    assert not errors, errors


def test_runs_after_leaves_out_the_jobs_that_wait_for_this_one(page: Page) -> None:
    from playwright.sync_api import expect

    open_sample(page, "offered")
    page.click(".dag-node[data-name=left]")
    expect(page.locator(".deps .dep-choice > span")).to_have_text(["prepare", "right"])  # join waits for left
    page.click(".dag-node[data-name=prepare]")  # every other job waits for prepare: nothing to offer
    expect(page.locator(".job-editor h3")).to_have_text("Job prepare")
    expect(page.locator(".deps")).to_have_count(0)


def test_add_job_adds_an_independent_job(page: Page) -> None:
    from playwright.sync_api import expect

    open_sample(page, "added")
    page.click(".dag-node[data-name=join]")
    page.click("button:text-is('+ Add job')")
    expect(page.locator(".dag-node")).to_have_count(5)
    expect(page.locator(".code-input")).to_have_value(
        "name: added\nargs:\n  message: hello\njobs:\n  - name: prepare\n"
        '    command: "echo {{ message }} from prepare; sleep 2"\n'
        '  - name: left\n    command: [bash, "-c", "echo left branch; sleep 3"]\n    depends_on: [prepare]\n'
        '  - name: right\n    command: "echo right branch; sleep 3"\n    depends_on: [prepare]\n'
        "  - name: join\n    command: echo both branches done\n    depends_on: [left, right]\n"
        "  - name: job5\n    command: echo hello\n"
    )
    expect(page.locator(".dag-edge[data-to=job5]")).to_have_count(0)
    expect(page.locator(".job-editor h3")).to_have_text("Job job5")


def test_leaving_with_unsaved_edits_asks_first(page: Page) -> None:
    from playwright.sync_api import expect

    page.goto("/workflows")
    page.click("a:text-is('New workflow')")  # in the app, so that Back is the app's too
    expect(page.locator(".validity")).to_have_text("✓ valid")
    page.fill(".code-input", page.input_value(".code-input").replace("name: diamond", "name: guarded"))
    page.click("a.nav-link[data-nav=jobs]")
    dialog = page.locator("dialog.dialog")
    expect(dialog.locator("h2")).to_have_text("Leave without saving?")
    dialog.locator("button:text-is('Cancel')").click()
    expect(page).to_have_url("/workflows/new")
    expect(page.locator(".code-input")).to_have_value(re.compile("name: guarded"))
    page.go_back()  # Back asks too, and staying keeps the page and its URL
    expect(dialog.locator("h2")).to_have_text("Leave without saving?")
    dialog.locator("button:text-is('Cancel')").click()
    expect(page).to_have_url("/workflows/new")
    expect(page.locator(".code-input")).to_have_value(re.compile("name: guarded"))
    page.click("a.nav-link[data-nav=jobs]")
    dialog.locator("button:text-is('Leave')").click()
    expect(page).to_have_url("/jobs")
    page.go_back()  # the jobs page has nothing to lose: Back goes straight back, a fresh sample is not an edit
    expect(page.locator(".validity")).to_have_text("✓ valid")
    page.click("a.nav-link[data-nav=history]")
    expect(page).to_have_url("/history")

    tab = page.context.new_page()  # closing or reloading the tab gets the browser's own prompt
    tab.goto("/workflows/new")
    tab.wait_for_selector(".page[data-ready=true]")
    tab.click(".code-input")
    tab.keyboard.press("End")
    tab.keyboard.type("# edited")
    seen: list[str] = []

    def answer(dialog: Dialog) -> None:
        seen.append(dialog.type)
        dialog.accept()

    tab.on("dialog", answer)
    with tab.expect_event("close"):
        tab.close(run_before_unload=True)
    assert seen == ["beforeunload"]


CHAIN = """name: {name}
jobs:
  - name: a
    command: "echo a"
  - name: b
    command: "echo b"
    depends_on: [a]
  - name: c
    command: "echo c"
    depends_on: [b]
  - name: top
    command: "echo top"
    depends_on: [c]
  - name: bottom
    command: "echo bottom"
    depends_on: [c]
"""


def boxes(page: Page, selector: str) -> list[dict[str, float]]:
    found = [page.locator(selector).nth(i).bounding_box() for i in range(page.locator(selector).count())]
    return [box for box in found if box is not None]


def overlap(one: dict[str, float], other: dict[str, float]) -> bool:
    return (
        one["x"] < other["x"] + other["width"]
        and other["x"] < one["x"] + one["width"]
        and one["y"] < other["y"] + other["height"]
        and other["y"] < one["y"] + one["height"]
    )


def clipped(box: dict[str, float], panel: dict[str, float]) -> dict[str, float] | None:
    """The part of ``box`` inside ``panel``, None when nothing is."""
    x, y = max(box["x"], panel["x"]), max(box["y"], panel["y"])
    right = min(box["x"] + box["width"], panel["x"] + panel["width"])
    bottom = min(box["y"] + box["height"], panel["y"] + panel["height"])
    return {"x": x, "y": y, "width": right - x, "height": bottom - y} if right > x and bottom > y else None


def type_workflow(page: Page, text: str, nodes: int) -> None:
    from playwright.sync_api import expect

    page.fill(".code-input", text)
    expect(page.locator(".validity")).to_have_text("✓ valid")
    expect(page.locator(".dag-node")).to_have_count(nodes)


def test_the_zoom_buttons_cover_no_job(page: Page) -> None:
    """B35: the zoom buttons (minus, plus, Fit) sat over the graph's top right corner, on a wide graph's last column."""
    open_sample(page, "covered")
    type_workflow(page, CHAIN.format(name="covered"), 5)
    buttons = boxes(page, ".dag-zoom button")
    assert len(buttons) == 3
    for zoom in (None, "Zoom in", "Zoom in", "Fit"):
        if zoom:
            page.click(f".dag-zoom button[aria-label='{zoom}']" if zoom != "Fit" else ".dag-zoom button:text-is('Fit')")
        buttons = boxes(page, ".dag-zoom button")
        panel = page.locator(".dag svg").bounding_box()
        assert panel is not None
        for node in boxes(page, ".dag-node rect"):  # the part of a job the panel shows (it clips the rest)
            shown = clipped(node, panel)
            assert shown is None or not any(overlap(shown, button) for button in buttons), (zoom, shown, buttons)


def test_the_graph_cannot_be_dragged_out_of_its_panel(page: Page) -> None:
    """B35: a drag on the background panned without bound, so the graph could be lost off the panel."""
    open_sample(page, "unbounded")
    page.click("button[aria-label='Zoom in']")
    svg = page.locator(".dag svg").bounding_box()
    assert svg is not None
    viewport = page.viewport_size
    assert viewport is not None
    for direction in ("left", "right", "up", "down"):
        for _ in range(4):  # each drag from the panel's edge to the window's
            panel = page.locator(".dag svg").bounding_box()
            assert panel is not None
            bottom = panel["y"] + panel["height"] - 3
            start, end = {
                "left": ((panel["x"] + panel["width"] - 6, bottom), (2, bottom)),
                "right": ((panel["x"] + 6, bottom), (viewport["width"] - 2, bottom)),
                "up": ((panel["x"] + 6, bottom), (panel["x"] + 6, 2)),
                "down": ((panel["x"] + 6, panel["y"] + 3), (panel["x"] + 6, viewport["height"] - 2)),
            }[direction]
            drag(page, start, end)
        panel = page.locator(".dag svg").bounding_box()
        assert panel is not None
        visible = [node for node in boxes(page, ".dag-node rect") if overlap(node, panel)]
        assert visible, f"dragged {direction}: no job is left in the panel"


def test_a_new_workflow_in_the_editor_is_shown_whole_not_at_the_old_pan(page: Page) -> None:
    """B35: after zooming and panning one workflow, another typed or pasted over it kept the old view."""
    open_sample(page, "swapped")
    for _ in range(4):
        page.click("button[aria-label='Zoom in']")
    svg = page.locator(".dag svg").bounding_box()
    assert svg is not None
    drag(page, (svg["x"] + 20, svg["y"] + svg["height"] - 4), (svg["x"] + 300, svg["y"] + svg["height"] - 4))
    type_workflow(page, CHAIN.format(name="swapped"), 5)
    shown = (page.get_attribute(".dag", "data-scale"), page.get_attribute(".dag svg", "viewBox"))
    page.click(".dag-zoom button:text-is('Fit')")
    assert shown == (page.get_attribute(".dag", "data-scale"), page.get_attribute(".dag svg", "viewBox"))
    panel = page.locator(".dag svg").bounding_box()
    assert panel is not None
    for node in boxes(page, ".dag-node rect"):  # every job whole in the panel
        assert panel["x"] <= node["x"]
        assert node["x"] + node["width"] <= panel["x"] + panel["width"] + 1
