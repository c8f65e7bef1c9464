"""Push subscriptions as devices a person recognises: a name from the browser's User-Agent."""

from __future__ import annotations

import re

# Most specific first: Edge and Opera say "Chrome" too, Chrome says "Safari".
_BROWSERS = (
    ("Edg/", "Edge"),
    ("EdgA/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("HeadlessChrome/", "Chromium"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
    ("Safari/", "Safari"),
)
_PLATFORMS = (
    ("Android", "Android"),
    ("iPhone", "iPhone"),
    ("iPad", "iPad"),
    ("CrOS", "ChromeOS"),
    ("Windows", "Windows"),
    ("Macintosh", "macOS"),
    ("Linux", "Linux"),
)
TEST_PAYLOAD = {
    "title": "purplemux",
    "body": "Test notification: this device shows purplemux's notifications.",
    "tag": "purplemux-test",
    "url": "/",
}
"""What "Send test" delivers (no session in it)."""


def device_name(user_agent: str | None) -> str:
    """ "Chrome on Android", "Safari on iPhone", …; words from a fixed list, never the raw header
    (it is text anyone can send)."""
    ua = user_agent or ""
    browser = next((name for mark, name in _BROWSERS if mark in ua), "A browser")
    platform = next((name for mark, name in _PLATFORMS if re.search(mark, ua)), "")
    return f"{browser} on {platform}" if platform else browser
