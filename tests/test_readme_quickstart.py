"""The README's code runs as a newcomer would run it: every Python block and the command-line blocks of its quick
start, copied out of the README, in the order written, each in a fresh process in an empty folder.

A Python block must import what it uses (a fresh interpreter starts with nothing); the command must find the file
that the Python block before it wrote; the quick start must print what the README shows. The in-process checks of
the same blocks against fairlearn and AIF360 are in tests/test_quickstart.py; this file checks that the blocks stand
alone. Oracles: the README's own `text` block for what the quick start prints, and the files the blocks say they
write, read back here with the standard library.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# the sections whose shell blocks are a walk-through to run; every other shell block installs or runs the project
RUNNABLE_SECTIONS = ("Quick start", "From a file to a report for a governance board")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def readme_blocks(text: str) -> list[tuple[str, str, str]]:
    "(section, language, code) of every fenced block of a Markdown text, in order."
    out, section = [], ""
    pos = 0
    for m in FENCE.finditer(text):
        heads = re.findall(r"^## (.+)$", text[pos : m.start()], re.M)
        section = heads[-1].strip() if heads else section
        pos = m.end()
        out.append((section, m.group(1), m.group(2)))
    return out


def walkthrough(text: str) -> list[tuple[str, str, str]]:
    "The blocks to run, in order: every python block, and the bash blocks of the walk-through sections."
    return [
        b
        for b in readme_blocks(text)
        if b[1] == "python" or (b[1] == "bash" and b[0] in RUNNABLE_SECTIONS)
    ]


def test_block_reader_finds_sections_languages_and_order():
    "A worked example of the reader: two sections, three blocks, the text block left out of the walk-through."
    text = "# t\n\n## Quick start\n\n```python\nx = 1\n```\n\n```text\n1\n```\n\n## Install\n\n```bash\npip x\n```\n"
    assert readme_blocks(text) == [
        ("Quick start", "python", "x = 1\n"),
        ("Quick start", "text", "1\n"),
        ("Install", "bash", "pip x\n"),
    ]
    assert walkthrough(text) == [("Quick start", "python", "x = 1\n")]


def test_every_other_shell_block_only_installs_or_runs_the_project():
    "A shell block outside the walk-through is an install or a make target, never a step a reader must run to follow."
    allowed = re.compile(r"^(?:make|pip|python -m pip|source)\b")
    for section, lang, code in readme_blocks(README.read_text(encoding="utf-8")):
        if lang == "bash" and section not in RUNNABLE_SECTIONS:
            for line in code.splitlines():
                if line.strip():
                    assert allowed.match(line.strip()), (
                        f"README '{section}': a shell line to run: {line!r}"
                    )


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = (
        f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the venv's `fairlib` command
    )
    env["MPLBACKEND"] = "Agg"
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.slow
def test_readme_walkthrough_runs_in_order_in_a_fresh_folder(tmp_path):
    text = README.read_text(encoding="utf-8")
    blocks = walkthrough(text)
    langs = [(s, lang) for s, lang, _ in blocks]
    assert ("Quick start", "python") in langs, "the README has a Python quick start"
    assert ("From a file to a report for a governance board", "bash") in langs, (
        "the README has a command line"
    )
    # the Python block that writes the file comes before the command that reads it
    first_cli = next(i for i, (s, lang, _) in enumerate(blocks) if lang == "bash")
    assert any("to_csv(" in code for _, lang, code in blocks[:first_cli] if lang == "python")
    outputs = []
    for i, (section, lang, code) in enumerate(blocks):
        if lang == "python":
            script = tmp_path / f"readme_block_{i}.py"
            script.write_text(code, encoding="utf-8")
            cmd = [sys.executable, script.name]
        else:
            cmd = ["bash", "-e", "-c", code]
        p = subprocess.run(
            cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=900
        )
        assert p.returncode == 0, (
            f"README '{section}' {lang} block {i} failed ({p.returncode}):\n{p.stderr[-3000:]}"
        )
        outputs.append((section, lang, p.stdout))
    shown = re.findall(
        r"```text\n(.*?)```", text.split("## Quick start", 1)[1].split("\n## ", 1)[0], re.S
    )
    assert shown, "the quick start shows what it prints"
    printed = next(out for s, lang, out in outputs if s == "Quick start" and lang == "python")
    assert printed.strip() == shown[0].strip()
    # what the walk-through says it writes is there, and is what it says it is
    with open(tmp_path / "adult.csv", newline="", encoding="utf-8") as f:
        header = f.readline().strip().split(",")
        n = sum(1 for _ in f)
    assert {"income", "predicted", "sex", "race"} <= set(header) and n == 16_281
    assert (
        (tmp_path / "report.html")
        .read_text(encoding="utf-8")
        .lstrip()
        .lower()
        .startswith("<!doctype html>")
    )
    result = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert result["n"] == 16_281
    cli = next(out for s, lang, out in outputs if lang == "bash")
    assert cli.startswith("Fairness audit: 16,281 records"), cli[:200]
