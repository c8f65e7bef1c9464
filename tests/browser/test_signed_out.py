"""`purplemux logout-all` reaches an open dashboard: its feed closes as signed out, the page says
so and deletes the rows it saved for offline use (they are not this browser's to keep)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support import Daemon
from tests.support.browser import hook, make, sign_in

pytestmark = pytest.mark.browser

SAVED_ROWS = "() => JSON.parse(localStorage.getItem('purplemux:last-rows') || 'null')"
# Records, in order, each connection status the page announces and each time it saves its rows.
RECORD = """
window.__log = [];
document.addEventListener("purplemux:connection", (e) => window.__log.push(e.detail.status));
const setItem = Storage.prototype.setItem;
Storage.prototype.setItem = function (key, value) {
  if (key === "purplemux:last-rows") window.__log.push("saved");
  return setItem.call(this, key, value);
};
"""


def test_logout_all_signs_the_open_page_out_and_forgets_its_saved_rows(
    page: Page, daemon: Daemon
) -> None:
    make(daemon, "s-one", "review", cwd="/w/shop-api")
    page.add_init_script(RECORD)
    sign_in(page, daemon)
    page.wait_for_function(f"() => ({SAVED_ROWS})()?.sessions?.length === 1")
    saved = page.evaluate(SAVED_ROWS)
    assert [s["id"] for s in saved["sessions"]] == ["s-one"]

    assert "signed out 1" in daemon.cli("logout-all", check=True).stdout
    # A change the page draws while its feed is still open: its rows are due to be saved again.
    hook(daemon, "s-two", "SessionStart", pane="%1", cwd="/w/web", source="startup")
    mark = page.locator("#connection")
    expect(mark).to_have_attribute("data-connection", "signed-out", timeout=20_000)
    expect(mark).to_contain_text("signed out")
    expect(mark).to_contain_text("purplemux open")
    page.wait_for_function(f"() => ({SAVED_ROWS})() === null")
    # The page tries again later (and is told the same): nothing was saved after it was told,
    # not even the save that was due (it would have come before that second try).
    page.wait_for_function("() => window.__log.filter((s) => s === 'signed-out').length >= 2")
    log = page.evaluate("() => window.__log")
    assert "saved" not in log[log.index("signed-out") :], log
    assert page.evaluate("() => localStorage.getItem('purplemux:last-rows')") is None

    # A reload (the cookie is dead: the daemon asks for the link again) saves nothing anew.
    page.reload()
    assert page.evaluate("() => localStorage.getItem('purplemux:last-rows')") is None
