"""The installable app in Chromium at a phone's size: installable, offline, layout, sound, badge."""

from __future__ import annotations

import json
import re
import struct
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, Playwright, expect

from tests.chromium import LAUNCH_ARGS, require
from tests.support import Daemon, wait_for
from tests.support.browser import hook, make, sign_in, wait_state
from tests.support.screens import asking, dialog_pane

pytestmark = pytest.mark.browser

PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
}

# Records what the page asks of Web Audio and of the App Badging API (the calls still go on).
INSTRUMENT = """
window.__notes = [];
window.__badges = [];
const Ctx = window.AudioContext;
if (Ctx) {
  const make = Ctx.prototype.createOscillator;
  Ctx.prototype.createOscillator = function () {
    const osc = make.call(this);
    const start = osc.start.bind(osc);
    osc.start = (...args) => { window.__notes.push(osc.frequency.value); return start(...args); };
    return osc;
  };
}
for (const name of ["setAppBadge", "clearAppBadge"]) {
  const own = navigator[name] ? navigator[name].bind(navigator) : null;
  navigator[name] = (n) => {
    window.__badges.push(name === "clearAppBadge" ? 0 : n);
    return own ? own(n).catch(() => {}) : Promise.resolve();
  };
}
"""


def get(daemon: Daemon, path: str, auth: bool = False) -> tuple[int, dict[str, str], bytes]:
    headers = {"Authorization": f"Bearer {daemon.token}"} if auth else {}
    req = urllib.request.Request(daemon.url + path, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture
def phone(browser: Any, daemon: Daemon) -> Iterator[Page]:
    """A phone-sized touch page (closed before its daemon stops)."""
    context = browser.new_context(**PHONE)
    context.add_init_script(INSTRUMENT)
    page = context.new_page()
    seen: list[str] = []
    page.on("pageerror", lambda exc: seen.append(f"pageerror: {exc}"))
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    yield page
    context.close()
    # Offline, the failed WebSocket and fetches log network errors; and these sessions' panes
    # are made up, so the prompt panel's GET /screen gets its 409 ("no such pane"). Nothing else.
    expected = ("ERR_INTERNET_DISCONNECTED", "status of 409 (Conflict)")
    assert [e for e in seen if not any(x in e for x in expected)] == []


def controlled(page: Page) -> None:
    """Until the service worker controls the page and has cached the shell."""
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    page.wait_for_function(
        """async () => {
          for (const name of await caches.keys()) {
            const cache = await caches.open(name);
            if (await cache.match('/app-shell') && await cache.match('/static/app.js')) return true;
          }
          return false;
        }"""
    )


# --- installable --------------------------------------------------------------------------------


def test_the_manifest_and_icons_need_no_login_and_say_what_an_app_needs(daemon: Daemon) -> None:
    status, headers, body = get(daemon, "/manifest.webmanifest")
    assert status == 200
    assert headers["content-type"].startswith("application/manifest+json")
    manifest = json.loads(body)
    assert manifest["name"] == manifest["short_name"] == "purplemux"
    assert manifest["display"] == "standalone"
    # Relative to the manifest: the same behind a reverse proxy at another host or port.
    assert manifest["start_url"] == manifest["scope"] == "./"
    assert manifest["theme_color"] and manifest["background_color"]
    dark = manifest["user_preferences"]["color_scheme_dark"]
    assert dark["theme_color"] != manifest["theme_color"]
    sizes = {(i["sizes"], i["purpose"]) for i in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes
    for icon in [*manifest["icons"], {"src": "static/apple-touch-icon.png", "sizes": "180x180"}]:
        status, headers, data = get(daemon, "/" + icon["src"])
        assert status == 200 and headers["content-type"] == "image/png"
        width, height = png_size(data)
        assert f"{width}x{height}" == icon["sizes"]
    # The dashboard itself still needs the login; its shell holds no session.
    make(daemon, "s-secret", "review", cwd="/w/very-private-project")
    assert get(daemon, "/")[0] == 401
    status, _, shell = get(daemon, "/app-shell")
    assert status == 200
    assert b"data-shell" in shell and b"very-private-project" not in shell
    assert b"very-private-project" in get(daemon, "/", auth=True)[2]


def test_chromium_reports_the_dashboard_installable(
    playwright: Playwright, daemon: Daemon, tmp_path: Path
) -> None:
    # Installability is judged only outside incognito (TESTING.md): a persistent profile.
    context: BrowserContext = playwright.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=require(), args=LAUNCH_ARGS, **PHONE
    )
    try:
        page = context.pages[0] if context.pages else context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        sign_in(page, daemon)
        controlled(page)
        cdp = context.new_cdp_session(page)
        found = cdp.send("Page.getInstallabilityErrors")
        assert found["installabilityErrors"] == []
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["errors"] == []
        assert errors == []
    finally:
        context.close()


# --- offline --------------------------------------------------------------------------------------


def test_offline_the_app_opens_on_the_last_rows_then_turns_live_by_itself(
    phone: Page, daemon: Daemon
) -> None:
    make(daemon, "s-ask", "needs-input", cwd="/w/shop-api")
    make(daemon, "s-done", "review", pane="%1", cwd="/w/web")
    sign_in(phone, daemon)
    controlled(phone)
    phone.wait_for_function(
        "() => (JSON.parse(localStorage.getItem('purplemux:last-rows') || '{}').sessions || [])"
        ".length === 2"
    )

    phone.context.set_offline(True)
    phone.reload()  # no browser error page: the worker answers with the shell
    expect(phone.locator("body")).to_have_attribute("data-shell", "")
    for sid, state in (("s-ask", "needs-input"), ("s-done", "review")):
        expect(phone.locator(f'[data-session-id="{sid}"]')).to_have_attribute("data-state", state)
    mark = phone.locator("#connection")
    expect(mark).to_have_text(re.compile(r"^offline since \d\d:\d\d · \d+s — reconnecting…$"))
    first = mark.text_content()
    phone.wait_for_function(
        "t => document.getElementById('connection').textContent !== t", arg=first
    )
    dismiss = phone.locator('[data-session-id="s-done"] [data-action="dismiss"]')
    expect(dismiss).to_be_disabled()
    expect(dismiss).to_have_attribute("title", re.compile("Offline"))
    reason = phone.locator('[data-slot="offline-reason"]')
    expect(reason).to_be_visible()
    expect(reason).to_contain_text("answering and dismissing")

    phone.context.set_offline(False)
    expect(mark).to_have_attribute("data-connection", "live", timeout=15_000)
    expect(dismiss).to_be_enabled()
    expect(reason).to_be_hidden()
    # Live again without a reload: a change arrives through the feed.
    phone.evaluate("() => { window.__sameDocument = true; }")
    hook(
        daemon, "s-ask", "PostToolUse", cwd="/w/shop-api", tool_name="Bash", tool_use_id="tu-s-ask"
    )
    expect(phone.locator('[data-session-id="s-ask"]')).to_have_attribute("data-state", "busy")
    assert phone.evaluate("window.__sameDocument") is True


def test_the_worker_caches_the_shell_by_version_and_no_api_answer(
    phone: Page, daemon: Daemon
) -> None:
    make(daemon, "s-one", "review")
    sign_in(phone, daemon)
    controlled(phone)
    phone.evaluate("fetch('/api/sessions').then(r => r.text())")
    cached = phone.evaluate(
        """async () => {
          const out = {};
          for (const name of await caches.keys()) {
            const cache = await caches.open(name);
            out[name] = (await cache.keys()).map(r => new URL(r.url).pathname);
          }
          return out;
        }"""
    )
    _, _, script = get(daemon, "/static/sw.js")
    version = re.search(rb'const SHELL_VERSION = "([0-9a-f]{16})";', script)
    assert version, "the daemon stamps the worker with its shell's version"
    assert list(cached) == [f"purplemux-shell-{version.group(1).decode()}"]
    paths = next(iter(cached.values()))
    assert "/app-shell" in paths and "/static/app.js" in paths
    assert not [p for p in paths if p.startswith("/api/") or p == "/"]
    # Every file the worker lists is cached (none failed), and every file the page loaded is
    # one of them: a module the page imports cannot be missing offline.
    listed = re.search(rb"^const SHELL_FILES = (\[.*\]);$", script, re.M)
    assert listed, "the daemon stamps the worker with the shell's files"
    assert sorted(paths) == sorted(["/app-shell", *json.loads(listed.group(1))])
    loaded = phone.evaluate(
        """() => performance.getEntriesByType("resource")
          .map(e => new URL(e.name))
          .filter(u => u.origin === location.origin && u.pathname.startsWith("/static/"))
          .map(u => u.pathname)"""
    )
    assert "/static/follow.js" in loaded
    assert sorted(set(loaded) - set(paths)) == []


# --- a phone's layout -----------------------------------------------------------------------------

TOO_SMALL = """() => [...document.querySelectorAll('button, a, summary, input[type=checkbox]')]
  .filter(el => {
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || el.closest('[hidden]')) return false;
    const label = el.closest('label');
    const target = label ? label.getBoundingClientRect() : box;
    return target.height < 44 || target.width < 44;
  })
  .map(el => el.outerHTML.slice(0, 80))"""
WIDER = "() => document.documentElement.scrollWidth - window.innerWidth"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_at_a_phones_width_everything_fits_and_is_big_enough_to_touch(
    phone: Page, daemon: Daemon, scheme: str, tmp_path: Path
) -> None:
    phone.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    make(daemon, "s-long", "needs-input", cwd="/w/a-project-with-a-rather-long-folder-name")
    make(daemon, "s-done", "review", pane="%1")
    make(daemon, "s-run", "busy", pane="%2")
    with dialog_pane(tmp_path) as (sock, pane):  # a real pane showing Claude's dialog
        asking(daemon, "s-ask", sock, pane)
        sign_in(phone, daemon)
        options = phone.locator('[data-session-id="s-ask"] .prompt-option')
        expect(options.first).to_be_visible()  # the prompt panel with its option buttons
        assert options.count() >= 2
        expect(phone.locator('[data-session-id="s-ask"] [data-action="jump"]')).to_be_visible()
        assert phone.evaluate(WIDER) <= 0
        assert phone.evaluate(TOO_SMALL) == []
    phone.locator(".settings-button").tap()
    expect(phone.locator(".settings-body")).to_be_visible()
    assert phone.evaluate(WIDER) <= 0
    assert phone.evaluate(TOO_SMALL) == []
    phone.goto(daemon.url + "/history")
    assert phone.evaluate(WIDER) <= 0
    assert phone.evaluate(TOO_SMALL) == []


# --- sound ----------------------------------------------------------------------------------------


def notes(page: Page) -> list[float]:
    return list(page.evaluate("window.__notes"))


def test_the_chime_plays_only_when_on_after_a_gesture_and_one_sound_per_state(
    phone: Page, daemon: Daemon
) -> None:
    make(daemon, "s1", "idle")
    sign_in(phone, daemon)
    # Off by default: an entry into needs-input makes no sound.
    make(daemon, "s2", "needs-input", pane="%1")
    expect(phone.locator('[data-session-id="s2"]')).to_have_attribute("data-state", "needs-input")
    phone.wait_for_timeout(300)
    assert notes(phone) == []

    phone.locator(".settings-button").tap()
    phone.locator('input[data-chime="needs-input"]').tap()  # the gesture that allows audio
    phone.locator(".settings-button").tap()
    make(daemon, "s3", "needs-input", pane="%2")
    phone.wait_for_function("() => window.__notes.length >= 2")
    assert notes(phone) == [880, 1175]

    # Review is switched separately: still off, so silence; then on, its own sound.
    make(daemon, "s4", "review", pane="%3")
    expect(phone.locator('[data-session-id="s4"]')).to_have_attribute("data-state", "review")
    phone.wait_for_timeout(300)
    assert notes(phone) == [880, 1175]
    phone.locator(".settings-button").tap()
    phone.locator('input[data-chime="review"]').tap()
    phone.locator(".settings-button").tap()
    make(daemon, "s5", "review", pane="%4")
    phone.wait_for_function("() => window.__notes.length >= 3")
    assert notes(phone)[2:] == [587]

    # Not for the row the page is focused on.
    phone.evaluate("location.hash = 'session-s1'")
    hook(daemon, "s1", "UserPromptSubmit", prompt="go")
    wait_state(daemon, "s1", "busy")
    hook(daemon, "s1", "Stop", last_assistant_message="done")
    expect(phone.locator('[data-session-id="s1"]')).to_have_attribute("data-state", "review")
    phone.wait_for_timeout(300)
    assert len(notes(phone)) == 3

    # Kept in the browser; after a reload nothing plays until the next gesture.
    phone.evaluate("location.hash = ''")
    phone.reload()
    expect(phone.locator("#connection")).to_have_attribute("data-connection", "live")
    expect(phone.locator('input[data-chime="needs-input"]')).to_be_checked()
    make(daemon, "s6", "needs-input", pane="%5")
    expect(phone.locator('[data-session-id="s6"]')).to_have_attribute("data-state", "needs-input")
    phone.wait_for_timeout(300)
    assert notes(phone) == []
    phone.locator(".brand").tap()  # any gesture
    make(daemon, "s7", "needs-input", pane="%6")
    phone.wait_for_function("() => window.__notes.length >= 2")
    assert notes(phone) == [880, 1175]


def test_the_app_icon_counts_the_sessions_that_need_you(phone: Page, daemon: Daemon) -> None:
    sign_in(phone, daemon)
    make(daemon, "b1", "needs-input")
    make(daemon, "b2", "review", pane="%1")
    phone.wait_for_function("() => window.__badges.includes(2)")
    phone.locator('[data-session-id="b2"] [data-action="dismiss"]').tap()
    hook(daemon, "b1", "PostToolUse", tool_name="Bash", tool_use_id="tu-b1")
    phone.wait_for_function("() => window.__badges[window.__badges.length - 1] === 0")
    assert wait_for(lambda: daemon.session("b1")["state"] == "busy")
