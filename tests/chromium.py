"""The system Chromium the browser tests drive (tests/test_docs_site.py, tests/test_htmlreport_browser.py)."""

from __future__ import annotations
import os, shutil
from pathlib import Path

import pytest


def chromium_path() -> str:
    "Debian's /usr/bin/chromium (`.ci/run` installs it when absent), or $CHROMIUM_PATH; fails the test otherwise."
    candidates = (
        os.environ.get("CHROMIUM_PATH"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    )
    for c in candidates:
        if c and Path(c).is_file():
            return c
    pytest.fail(
        "no Chromium: install Debian's `chromium` package (apt-get install -y chromium; .ci/run does) "
        "or set CHROMIUM_PATH"
    )
