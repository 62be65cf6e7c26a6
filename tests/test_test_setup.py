"""`make test`'s own set-up: the Chromium lookup (tools/ensure_chromium.sh), the no-skip rule
(tools/check_no_skips.py) and the install stamps of the Makefile."""

from __future__ import annotations
import hashlib, os, re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENSURE = ROOT / "tools" / "ensure_chromium.sh"
NO_SKIPS = ROOT / "tools" / "check_no_skips.py"


def _ensure(**env) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ENSURE)], capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


def test_chromium_path_from_the_environment_is_used(tmp_path):
    fake = tmp_path / "my-chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    p = _ensure(CHROMIUM_PATH=str(fake))
    assert p.returncode == 0 and p.stdout.strip() == f"chromium: {fake}", (p.stdout, p.stderr)


def test_a_chromium_path_that_is_not_an_executable_fails_with_one_message(tmp_path):
    for bad in (tmp_path / "missing", tmp_path):
        p = _ensure(CHROMIUM_PATH=str(bad))
        assert (
            p.returncode == 1
            and "is not an executable file" in p.stderr
            and p.stderr.count("\n") == 1
        ), p.stderr


def test_the_found_chromium_is_what_the_browser_tests_launch():
    "The script and tests/chromium.py agree (the script ran first in `make test`, so a Chromium is there)."
    sys.path.insert(0, str(Path(__file__).parent))
    from chromium import chromium_path, launch_args

    p = _ensure()
    assert p.returncode == 0, p.stderr
    found = (
        p.stdout.strip().splitlines()[-1].removeprefix("chromium: ").removesuffix(" (installed)")
    )
    assert Path(found).resolve() == Path(chromium_path()).resolve()
    args = launch_args()
    assert "--disable-background-networking" in args and ("--no-sandbox" in args) == (
        os.geteuid() == 0
    )


def _junit(tmp_path: Path, body: str) -> Path:
    f = tmp_path / "junit.xml"
    f.write_text(
        f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}</testsuite></testsuites>'
    )
    return f


def _no_skips(report: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(NO_SKIPS), str(report)], capture_output=True, text=True, timeout=60
    )


def test_no_skips_is_silent_when_every_test_ran(tmp_path):
    p = _no_skips(_junit(tmp_path, '<testcase classname="tests.test_a" name="test_x"/>' * 3))
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")


def test_a_skip_or_an_xfail_fails_with_its_reason(tmp_path):
    body = (
        '<testcase classname="tests.test_a" name="test_ok"/>'
        '<testcase classname="tests.test_a" name="test_s"><skipped type="pytest.skip" message="no widget"/></testcase>'
        '<testcase classname="tests.test_b" name="test_x"><skipped type="pytest.xfail" message="known bug"/></testcase>'
    )
    p = _no_skips(_junit(tmp_path, body))
    assert p.returncode == 1
    assert (
        "tests.test_a::test_s: no widget" in p.stderr
        and "tests.test_b::test_x: known bug" in p.stderr
    )
    assert p.stderr.startswith("2 test(s) skipped or xfailed")


def test_a_missing_report_is_an_error_not_a_pass(tmp_path):
    p = _no_skips(tmp_path / "none.xml")
    assert p.returncode == 2 and "no pytest report" in p.stderr


def test_install_stamps_are_named_after_the_install_inputs():
    "A rewrite of pyproject.toml with the same text (nbdev-export does one) keeps the stamps; new text gives new ones."
    make = subprocess.run(
        ["make", "-pn", "-f", "Makefile", "reproduce"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    stamp = re.search(r"^STAMP :?= (.+)$", make, re.M).group(1)
    want = hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes() + (ROOT / "constraints.txt").read_bytes()
    )
    assert stamp.endswith(f".fairlib-installed-{want.hexdigest()[:16]}"), stamp
    rules = (ROOT / "Makefile").read_text()
    assert re.search(r"^\$\(STAMP\):\s*$", rules, re.M), (
        "the stamp rule must not depend on file dates"
    )
