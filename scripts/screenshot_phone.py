"""Regenerate docs/phone.png: the dashboard at a phone's width, with a needs-input prompt open.

Usage: .venv/bin/python -m scripts.screenshot_phone [--out docs/phone.png] [--dark]
A real daemon, the sessions of scripts.screenshot, and one more in a real tmux pane showing Claude
Code's permission dialog, so the row's prompt panel shows its option buttons.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from scripts.screenshot import REPO, seed, shoot
from tests.support import Daemon
from tests.support.screens import asking, dialog_pane


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "phone.png")
    parser.add_argument("--dark", action="store_true", help="prefers-color-scheme: dark")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="purplemux-shot-") as tmp:
        d = Daemon(home=Path(tmp) / "home", claude_dir=Path(tmp) / "claude").start()
        try:
            seed(d)
            with dialog_pane(Path(tmp)) as (sock, pane):
                asking(d, "s-phone", sock, pane)

                def show(page: object) -> None:
                    from playwright.sync_api import Page, expect

                    assert isinstance(page, Page)
                    expect(page.locator("#connection")).to_have_attribute("data-connection", "live")
                    expect(
                        page.locator('[data-session-id="s-phone"] .prompt-option').first
                    ).to_be_visible()
                    page.evaluate("window.scrollTo(0, 0)")

                # shoot() saves a desktop-sized page too; the phone one (390 x 844 at 2x) is ours.
                desk = Path(tmp) / "desktop.png"
                shoot(d, show, desk, (1280, 860), args.dark, args.out)
        finally:
            d.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
