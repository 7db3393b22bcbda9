"""Open a report page in headless Chromium: Debian's ``chromium`` driven by Playwright (its own
browser download is not reachable here), as root with ``--no-sandbox`` and
``--disable-background-networking``.

``opened(path)`` yields a :class:`Playwright page <playwright.sync_api.Page>` once the page says it
is ready (``body[data-ready="1"]``), and checks on exit that the page raised no script error and
requested nothing but its own file (a report fetches nothing when it is viewed).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Iterator


def chromium() -> str:
    """The path of Debian's Chromium (``scripts/install.sh`` installs it)."""
    path = shutil.which("chromium")
    assert path, "chromium is not installed: run scripts/install.sh (Debian package chromium)"
    return path


@contextlib.contextmanager
def opened(path: Path, fragment: str = "", width: int = 1200, height: int = 900) -> Iterator:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(),
                                     args=["--no-sandbox", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(Path(path).resolve().as_uri() + fragment)
            page.wait_for_selector("body[data-ready='1']", state="attached", timeout=30_000)
            yield page
        finally:
            browser.close()
    assert errors == [], errors
    own = Path(path).resolve().as_uri()
    assert [u for u in requests if not u.startswith(own)] == [], requests


def go(page, fragment: str, ready: str) -> None:
    """Navigate the open page to ``#fragment`` and wait for ``ready`` (a CSS selector) to show."""
    page.evaluate("f => { location.hash = f; }", fragment)
    page.wait_for_selector(ready, timeout=30_000)
