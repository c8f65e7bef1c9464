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
import re
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from purplemux.core.present import LOOKS
from purplemux.io.paths import web_dir
from purplemux.server.page import HEADERS, render_dashboard

router = APIRouter()

THEME = {"light": "#6d28d9", "dark": "#1a1922"}
BACKGROUND = {"light": "#f5f4f9", "dark": "#111017"}

# The manifest's icons: their URLs, like its others, are relative to the manifest (below).
ICONS: list[dict[str, str]] = [
    {"src": "static/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
    {"src": "static/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
    {
        "src": "static/icon-maskable-512.png",
        "sizes": "512x512",
        "type": "image/png",
        "purpose": "maskable",
    },
]
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
    "icons": ICONS,
}
SHELL_VERSION_MARK = 'const SHELL_VERSION = "dev";'
SHELL_FILES_MARK = "const SHELL_FILES = [];"
# A module's imports: `import … from "x"`, `export … from "x"`, `import "x"` (each at the start
# of a statement's line), and `import("x")` anywhere.
_IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']"""
    r"""|^\s*import\s*["']([^"']+)["']"""
    r"""|\bimport\(\s*["']([^"']+)["']\s*\)""",
    re.MULTILINE,
)


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
    """The service worker, stamped with the shell's files and version: any change to the page's
    files makes a new worker, which caches them anew and deletes the old cache."""
    script, version = _stamped(web_dir())
    return Response(
        script.replace(SHELL_VERSION_MARK, f'const SHELL_VERSION = "{version}";', 1),
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache"},  # Service-Worker-Allowed: the middleware
    )


@functools.cache
def _stamped(web: Path) -> tuple[str, str]:
    """sw.js with the list of the shell's files, and a digest of every file the app shell is
    made of (read once per process)."""
    listed = json.dumps(shell_files(web, render_dashboard([], 0.0, shell=True)))
    digest = hashlib.sha256(listed.encode())  # a file listed or no longer: a new version too
    for path in sorted([*(web / "static").iterdir(), *(web / "templates").iterdir()]):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    script = (web / "static" / "sw.js").read_text()
    script = script.replace(SHELL_FILES_MARK, f"const SHELL_FILES = {listed};", 1)
    return script, digest.hexdigest()[:16]


def shell_files(web: Path, page: str) -> list[str]:
    """Every file the shell page (`page`, its HTML) loads, as paths on this server: its
    <script>, <link> and <img> files, the modules those import (followed through every import,
    static or dynamic), the icons the manifest names, and the icon of every state (app.js puts
    the most urgent one in the tab). Only files this server has; in the order first met."""
    found: dict[str, None] = {}

    def add(url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or parts.query or url in found:
            return
        if url == "/manifest.webmanifest":
            found[url] = None
            for icon in ICONS:
                add(urljoin(url, icon["src"]))
            return
        file = _static_file(web, parts.path)
        if file is None:
            return
        found[url] = None
        if file.suffix == ".js":
            for match in _IMPORT.finditer(file.read_text()):
                add(urljoin(url, next(m for m in match.groups() if m)))

    tags = _Loads()
    tags.feed(page)
    tags.close()
    for url in tags.urls:
        add(url)
    for look in LOOKS.values():
        add(f"/static/icon-{look.icon}.svg")
    return list(found)


def _static_file(web: Path, path: str) -> Path | None:
    """The file under web/static that /static/<path> serves; None for anything else."""
    if not path.startswith("/static/"):
        return None
    static = (web / "static").resolve()
    file = (static / path.removeprefix("/static/")).resolve()
    return file if file.is_relative_to(static) and file.is_file() else None


_LOADING = {"script": "src", "link": "href", "img": "src"}
"""The tags that load a file, and the attribute naming it."""


class _Loads(HTMLParser):
    """The URLs a page's tags load (scripts, links, images); not the ones it links to (<a>)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = _LOADING.get(tag)
        url = next((v for k, v in attrs if k == wanted and v), None)
        if url is not None:
            self.urls.append(url)
