"""Render the app icons (PNG) from web/static/logo.svg with Chromium: python -m scripts.icons.

The web app manifest and iOS need raster icons; the SVG stays the one source. A maskable icon
keeps the mark inside the central 80 % safe zone on a full-bleed background, so a launcher may
cut any shape out of it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from playwright.async_api import async_playwright

STATIC = Path(__file__).resolve().parent.parent / "web" / "static"
BACKGROUND = "#6d28d9"
ICONS = (
    # name, size, maskable
    ("icon-192.png", 192, False),
    ("icon-512.png", 512, False),
    ("icon-maskable-512.png", 512, True),
    ("apple-touch-icon.png", 180, True),
)


def _html(svg: str, size: int, maskable: bool) -> str:
    inner = round(size * (0.62 if maskable else 1.0))
    back = BACKGROUND if maskable else "transparent"
    sized = svg.replace("<svg ", f'<svg width="{inner}" height="{inner}" ', 1)
    return (
        "<!doctype html><html><body style='margin:0;background:transparent'>"
        f"<div style='width:{size}px;height:{size}px;background:{back};display:grid;"
        f"place-items:center'><div style='width:{inner}px;height:{inner}px'>"
        f"{sized}"
        "</div></div></body></html>"
    )


async def main() -> None:
    svg = (STATIC / "logo.svg").read_text()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        for name, size, maskable in ICONS:
            page = await browser.new_page(viewport={"width": size, "height": size})
            await page.set_content(_html(svg, size, maskable))
            await page.screenshot(path=str(STATIC / name), omit_background=not maskable)
            await page.close()
            print(f"{name}: {size}x{size}")
        await browser.close()


if __name__ == "__main__":
    asyncio.run(main())
