"""The docs page "Reading an audit report" runs as written: its Python and shell blocks, in order, in a fresh folder,
print exactly the text blocks that follow them (UCI Adult from the CSV to the decision)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reading-an-audit-report.md"
BLOCK = re.compile(r"```(python|bash|text)\n(.*?)```", flags=re.S)
pytestmark = pytest.mark.slow


def blocks(text: str) -> list[tuple[str, str]]:
    "The page's fenced blocks in order: (language, code)."
    return [(m[1], m[2]) for m in BLOCK.finditer(text)]


def run_page(text: str, folder: Path) -> list[tuple[str, str, str, str | None]]:
    "(language, code, what it printed, the text block shown after it or None) for each code block, run in `folder`."
    from fairlib.cli import main

    ns, out, bs = {}, [], blocks(text)
    here = os.getcwd()
    os.chdir(folder)
    try:
        for i, (lang, code) in enumerate(bs):
            if lang == "text":
                continue
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                if lang == "python":
                    exec(compile(code, f"{PAGE.name} block {i}", "exec"), ns)
                else:
                    words = shlex.split(code.replace("\\\n", " "))
                    assert words[0] == "fairlib", "a shell block runs the fairlib command"
                    assert main(words[1:]) == 0
            shown = bs[i + 1][1] if i + 1 < len(bs) and bs[i + 1][0] == "text" else None
            out.append((lang, code, buf.getvalue(), shown))
    finally:
        os.chdir(here)
    return out


def test_the_page_runs_and_prints_what_it_shows(tmp_path):
    ran = run_page(PAGE.read_text(), tmp_path)
    assert [lang for lang, *_ in ran].count("bash") == 1 and len(ran) >= 6
    for lang, code, printed, shown in ran:
        if shown is not None and lang == "python":
            assert printed.strip() == shown.strip(), f"block\n{code}\nprints\n{printed}"
    assert (tmp_path / "report.html").is_file() and (tmp_path / "shared.json").is_file()
    html = (tmp_path / "report.html").read_text()
    assert html.index('id="what-to-do"') < html.index('id="metrics"')


if __name__ == "__main__":  # print each block's output, to write the page's text blocks
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        for lang, code, printed, _ in run_page(PAGE.read_text(), Path(d)):
            if lang == "python" and printed:
                print(f"----- {code.splitlines()[0]}\n{printed}", file=sys.stdout)
