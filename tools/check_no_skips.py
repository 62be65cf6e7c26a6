#!/usr/bin/env python
"""Fail when pytest skipped or xfailed any test: `make test` installs everything its tests need, so a skip means a
dependency or a set-up step is missing, and it must not pass as green.

    python tools/check_no_skips.py runs/test-artifacts/pytest-junit.xml    # `make pytest` runs it after pytest

Reads pytest's JUnit XML report (`--junitxml`; pytest-xdist merges the workers' results into it). Prints nothing and
exits 0 when no test case was skipped; otherwise lists each skipped case with pytest's reason and exits 1.
"""

from __future__ import annotations
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def skipped_cases(report: Path) -> list[str]:
    "'file::name: reason' of every test case the report marks skipped (pytest writes an xfail as a skip too)."
    root = ET.parse(report).getroot()
    out = []
    for case in root.iter("testcase"):
        for sk in case.findall("skipped"):
            where = f"{case.get('classname', '')}::{case.get('name', '')}"
            why = (sk.get("message") or sk.text or "").strip().splitlines()
            out.append(f"{where}: {why[0] if why else 'no reason given'}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    report = Path(argv[0])
    if not report.is_file():
        print(
            f"check_no_skips: no pytest report at {report} (did pytest run with --junitxml?)",
            file=sys.stderr,
        )
        return 2
    skipped = skipped_cases(report)
    if not skipped:
        return 0
    print(
        f"{len(skipped)} test(s) skipped or xfailed; `make test` runs every test, so each one fails it "
        "(install what it needs, or fix the test):",
        file=sys.stderr,
    )
    for s in skipped:
        print(f"  {s}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
