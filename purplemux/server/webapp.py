"""The installable app: its manifest, the offline app shell, and the versioned service worker.

None of these carries session data, so none needs a login (like the other static files): the
manifest and icons are fetched by the browser without cookies, and the shell is what the
service worker shows when the daemon cannot be reached, filled by the page from the last
snapshot it saved itself.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from purplemux.io.paths import web_dir
from purplemux.server.page import HEADERS, render_dashboard

router = APIRouter()

THEME = {"light": "#6d28d9", "dark": "#1a1922"}
BACKGROUND = {"light": "#f5f4f9", "dark": "#111017"}

# Relative to the manifest's own URL, so the app installs the same behind a reverse proxy that
# serves the daemon at another host or port.
MANIFEST = {
    "id": "./",
    "name": "purplemux",
    "short_name": "purplemux",
    "description": "What each coding-agent session is doing: idle, busy, needs input, review.",
    "start_url": "./",
    "scope": "./",
    "display": "standalone",
    "orientation": "any",
    "theme_color": THEME["light"],
    "background_color": BACKGROUND["light"],
    # Chromium's dark-mode colours for an installed app (ignored where unknown).
    "user_preferences": {
        "color_scheme_dark": {"theme_color": THEME["dark"], "background_color": BACKGROUND["dark"]}
    },
    "icons": [
        {"src": "static/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
        {"src": "static/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
        {
            "src": "static/icon-maskable-512.png",
            "sizes": "512x512",
            "type": "image/png",
            "purpose": "maskable",
        },
    ],
}
SHELL_VERSION_MARK = 'const SHELL_VERSION = "dev";'


@router.get("/manifest.webmanifest", include_in_schema=False)
async def manifest() -> Response:
    """The web app manifest (no login: browsers fetch it without credentials)."""
    return Response(
        json.dumps(MANIFEST, separators=(",", ":")),
        media_type="application/manifest+json",
        headers={"Cache-Control": "no-cache"},
    )


@router.get("/app-shell", include_in_schema=False)
async def app_shell() -> HTMLResponse:
    """The dashboard with no sessions: what the service worker opens offline (the page then
    draws the rows it saved itself). Holds no session data, so it needs no login."""
    html = render_dashboard([], time.time(), shell=True)
    return HTMLResponse(html, headers=HEADERS)


@router.get("/static/sw.js", include_in_schema=False)
async def service_worker() -> Response:
    """The service worker, stamped with the shell's version: any change to the page's files
    makes a new worker, which caches them anew and deletes the old cache."""
    script, version = _stamped(web_dir())
    return Response(
        script.replace(SHELL_VERSION_MARK, f'const SHELL_VERSION = "{version}";', 1),
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache"},  # Service-Worker-Allowed: the middleware
    )


@functools.cache
def _stamped(web: Path) -> tuple[str, str]:
    """sw.js and a digest of every file the app shell is made of (read once per process)."""
    digest = hashlib.sha256()
    for path in sorted([*(web / "static").iterdir(), *(web / "templates").iterdir()]):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return (web / "static" / "sw.js").read_text(), digest.hexdigest()[:16]
