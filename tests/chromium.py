"""The system Chromium the browser tests drive (tests/test_docs_site.py, tests/test_htmlreport_browser.py).

`make test` finds it or installs Debian's `chromium` package first (tools/ensure_chromium.sh, target `browser`), so
here a missing browser is a failure with that advice, never a skip. Playwright's own browser download is not used:
playwright launches this executable with the flags below (no sandbox as root, nothing fetched in the background).
"""

from __future__ import annotations
import os, shutil
from pathlib import Path

import pytest

# no background traffic (updates, sync, field trials) and no GPU process: the pages are checked offline
FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-gpu",
    "--disable-dev-shm-usage",
)


def chromium_path() -> str:
    "$CHROMIUM_PATH, Debian's /usr/bin/chromium, or `chromium` / `chromium-browser` on PATH; fails the test otherwise."
    env = os.environ.get("CHROMIUM_PATH")
    if env and not Path(env).is_file():
        pytest.fail(f"CHROMIUM_PATH={env} is not a file")
    candidates = (
        env,
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    )
    for c in candidates:
        if c and Path(c).is_file():
            return c
    pytest.fail(
        "no Chromium: run `make browser` (tools/ensure_chromium.sh finds or installs Debian's `chromium` package; "
        "`make test` runs it first) or set CHROMIUM_PATH"
    )


def launch_args() -> list[str]:
    "Chromium's command-line flags: FLAGS, plus --no-sandbox when running as root (Chromium refuses to start there)."
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return (["--no-sandbox"] if root else []) + list(FLAGS)


def launch(playwright):
    "A headless Chromium browser of `playwright` (sync API) on the system executable."
    return playwright.chromium.launch(
        executable_path=chromium_path(), headless=True, args=launch_args()
    )
