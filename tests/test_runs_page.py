"""tools/update_runs_page.py: the block of docs/runs.md shows what the run's manifest records, and nothing else.

Oracle: a manifest written here by hand, whose seconds are added up here.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location(
        "update_runs_page", ROOT / "tools" / "update_runs_page.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _checkout(tmp_path: Path, records=None) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "runs.md").write_text(
        "# Runs\n\n<!-- runs:start -->\nold\n<!-- runs:end -->\n\n## after\n"
    )
    if records is not None:
        (tmp_path / "runs").mkdir()
        (tmp_path / "runs" / "manifest.json").write_text(json.dumps(records))
    return tmp_path


RECORDS = [
    {
        "paper": "vfr",
        "stem": "01_cohort",
        "notebook": "nbs/papers/vfr/01_cohort.ipynb",
        "seconds": 61.5,
        "params": {"profile": "quick"},
        "finished": "2026-12-07 10:00:00",
        "input": "/abs/secret/path",
    },
    {
        "paper": "vfr",
        "stem": "02_panel",
        "notebook": "nbs/papers/vfr/02_panel.ipynb",
        "seconds": 100.0,
        "params": {"profile": "quick"},
        "finished": "2026-12-07 10:01:40",
    },
    {
        "paper": "mfarm",
        "stem": "02_inference",
        "notebook": "nbs/papers/mfarm/02_inference.ipynb",
        "seconds": 1073.0,
        "params": {"profile": "quick"},
        "finished": "2026-12-07 10:19:33",
    },
]


def test_block_lists_each_notebook_and_the_sums(tmp_path):
    root = _checkout(tmp_path, RECORDS)
    assert _tool().main(["--root", str(root)]) == 0
    text = (root / "docs" / "runs.md").read_text()
    assert "old" not in text and text.endswith("<!-- runs:end -->\n\n## after\n")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [r.split(" | ")[1] for r in rows] == [
        "`01_cohort.ipynb`",
        "`02_panel.ipynb`",
        "`02_inference.ipynb`",
    ]
    assert "| 1,073.0 |" in rows[2]
    total = (
        61.5 + 100.0 + 1073.0
    )  # 1,234.5 s = 20 min 34 s (round(1234.5) = 1234, banker's rounding)
    assert f"add up to {total:,.1f} s (20 min 34 s)" in text
    assert "vfr 161.5 s (2 min 42 s); mfarm 1,073.0 s (17 min 53 s)" in text
    assert "between 2026-12-07 10:00:00 and 2026-12-07 10:19:33" in text
    assert "/abs/secret/path" not in text, (
        "only the paper, notebook, profile, seconds and finishing time are shown"
    )
    assert _tool().main(["--root", str(root)]) == 0  # a second run finds the block up to date
    assert (root / "docs" / "runs.md").read_text() == text


def test_without_a_manifest_the_block_says_no_run_is_recorded(tmp_path):
    root = _checkout(tmp_path)
    assert _tool().main(["--root", str(root)]) == 0
    assert (
        "No run of `make reproduce` is recorded in this checkout"
        in (root / "docs" / "runs.md").read_text()
    )


def test_a_page_without_its_markers_is_refused(tmp_path):
    root = _checkout(tmp_path, RECORDS)
    (root / "docs" / "runs.md").write_text("# Runs\n\n<!-- runs:end -->\n<!-- runs:start -->\n")
    with pytest.raises(SystemExit, match="once each"):
        _tool().main(["--root", str(root)])


def test_the_committed_page_holds_the_markers_once():
    text = (ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    assert text.count("<!-- runs:start -->") == 1 and text.count("<!-- runs:end -->") == 1
    assert text.index("<!-- runs:start -->") < text.index("<!-- runs:end -->")
