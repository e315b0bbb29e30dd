"""From the walk of the dashboard (issue 28, item 7): Settings → Layers broke a long path anywhere, mid-name
(at 480 px); it now breaks only after a ``/``, never inside a name (not at its ``-`` either)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.web.conftest import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.cluster

# The lines each path's text runs over, and any piece of text (between two `/`) that itself runs over two lines.
PATH_LINES = """() => [...document.querySelectorAll('.layer-list code')].map((code) => {
  const tops = new Set();
  let split = null;
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const rows = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    for (const top of rows) tops.add(top);
    if (rows.size > 1) split = node.textContent;
  }
  return { path: code.textContent, lines: tops.size, split };
})"""


def test_layer_paths_break_after_a_slash(page: Page) -> None:
    page.set_viewport_size({"width": 480, "height": 900})
    open_page(page, "/settings")
    paths = page.evaluate(PATH_LINES)
    assert paths, "no layer path shown"
    assert any(p["lines"] > 1 for p in paths), f"no path long enough to wrap at 480 px: {paths}"
    assert [p for p in paths if p["split"]] == [], "a path broken inside a name"
