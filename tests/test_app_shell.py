"""The service worker's app shell as served: it lists exactly the files the shell page loads."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import urljoin

from fastapi.testclient import TestClient

from purplemux.core.present import LOOKS
from purplemux.io.paths import web_dir
from purplemux.server.webapp import shell_files

# Read here on their own terms, not with the server's parser: a tag that loads a file, and a
# module's import specifier (`from "x"`, `import "x"`, `import("x")`).
TAG = re.compile(r'<(?:script|link|img)\b[^>]*?\b(?:src|href)="([^"]+)"')
SPECIFIER = re.compile(r"""(?:\bfrom|\bimport)\s*\(?\s*["'](\.{0,2}/[^"']+)["']""")


def served_list(client: TestClient) -> tuple[str, list[str]]:
    """The served worker's version and its SHELL_FILES."""
    r = client.get("/static/sw.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    version = re.search(r'^const SHELL_VERSION = "([0-9a-f]{16})";$', r.text, re.M)
    files = re.search(r"^const SHELL_FILES = (\[.*\]);$", r.text, re.M)
    assert version and files, "the daemon stamps the worker with its shell's version and files"
    assert "const SHELL = [SHELL_PAGE, ...SHELL_FILES];" in r.text
    return version.group(1), json.loads(files.group(1))


def loaded_by_the_shell(client: TestClient) -> set[str]:
    """What the shell page loads, found by reading what the server sends: the page's tags, the
    modules they import (all the way down), the manifest's icons, and the tab's icon for each
    state (app.js sets /static/icon-<favicon>.svg)."""
    found: set[str] = set()
    todo = TAG.findall(client.get("/app-shell").text)
    todo += [f"/static/icon-{look.icon}.svg" for look in LOOKS.values()]
    while todo:
        url = todo.pop()
        if url in found:
            continue
        found.add(url)
        r = client.get(url)
        assert r.status_code == 200, url
        if url == "/manifest.webmanifest":
            todo += [urljoin(url, icon["src"]) for icon in r.json()["icons"]]
        elif url.endswith(".js"):
            todo += [urljoin(url, spec) for spec in SPECIFIER.findall(r.text)]
    return found


def test_the_served_worker_lists_exactly_the_files_the_shell_page_loads(
    client: TestClient,
) -> None:
    _, files = served_list(client)
    assert len(files) == len(set(files)), "each file once"
    assert set(files) == loaded_by_the_shell(client)
    # The module app.js imports for the live feed (it once went missing from a hand-kept list),
    # and a dynamically imported one; not the other pages' own files.
    assert {"/static/follow.js", "/static/push.js", "/manifest.webmanifest"} <= set(files)
    assert not {"/static/history.js", "/static/signin.js", "/static/sw.js"} & set(files)
    for path in files:
        assert client.get(path).status_code == 200, path


def test_a_module_a_page_imports_is_listed_however_deep(tmp_path: Path) -> None:
    web = tmp_path / "web"
    shutil.copytree(web_dir(), web)
    static = web / "static"
    app = static / "app.js"
    app.write_text('import { more } from "./extra.js";\n' + app.read_text())
    (static / "extra.js").write_text(
        'export { deeper } from "./sub/deeper.js";\n'
        'export const more = () => import("/static/later.js");\n'
    )
    (static / "sub").mkdir()
    (static / "sub" / "deeper.js").write_text('import "../side.js";\nexport const deeper = 1;\n')
    (static / "later.js").write_text("export const later = 1;\n")
    (static / "side.js").write_text("")
    (static / "unused.js").write_text("")
    page = (
        '<link rel="stylesheet" href="/static/style.css"><a href="/static/unused.js">x</a>'
        '<script type="module" src="/static/app.js"></script>'
        '<script src="https://elsewhere.example/x.js"></script>'
        '<img src="/static/missing.svg">'
    )

    files = shell_files(web, page)

    assert files[:3] == ["/static/style.css", "/static/app.js", "/static/extra.js"]
    for path in ("/static/sub/deeper.js", "/static/side.js", "/static/later.js"):
        assert path in files
    assert "/static/follow.js" in files  # app.js's own imports still
    assert not [f for f in files if "unused" in f or "missing" in f or "elsewhere" in f]
