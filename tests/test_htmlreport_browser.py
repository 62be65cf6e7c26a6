"""The HTML reports fairlib writes, in a real browser.

A report of a real audit (UCI Adult, a rule-based classifier, sensitive features sex and race, VFR with 200
resamples) is written to a temporary folder and opened from file:// in headless Chromium through Playwright. It fails
on any console error or uncaught page error, an <img> that does not load (naturalWidth == 0), or any request that
is not a file:// or data: URL (every such request is aborted and reported: the report must open with no network).
axe-core (bundled in axe-playwright-python) then checks it, and fails on any violation of impact "serious" or
"critical". The VFR per-model report (`fairlib.vfr.report.audit_report_html`) and a `runs/index.html` written by
`fairlib.runner.runindex.build_index` get the same check. A 1280-px-wide screenshot of the audit report is kept in
`runs/test-artifacts/audit_report.png`.

Chromium: /usr/bin/chromium (Debian's `chromium` package; `make test` installs it when absent), or the executable named
by $CHROMIUM_PATH. Playwright's own browser download is not used.
"""

from __future__ import annotations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from chromium import launch
from test_vfr_report_html import (
    _table as vfr_reliability_example,
)  # the VFR report tests' six-cell table

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "runs" / "test-artifacts"
WIDTH = 1280
pytestmark = [pytest.mark.xdist_group("browser"), pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def adult_result():
    import fairlib as fl
    from fairlib.handbook import load_adult

    d = load_adult()
    d["rule"] = ((d.education_num >= 13) | (d.capital_gain > 5000)).astype(
        int
    )  # a rule-based classifier
    d["score"] = np.clip((d.education_num - 1) / 15, 0, 1)
    return fl.audit(
        "high_income",
        "rule",
        sensitive_features=["sex", "race"],
        data=d,
        y_prob="score",
        vfr=True,
        n_resamples=200,
    )


def _open(browser, path: Path):
    "A page showing `path` from file://, with its problems recorded: console errors, page errors, off-machine requests."
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    problems = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))

    def guard(route):
        url = route.request.url
        if url.startswith(("file://", "data:")):
            route.continue_()
        else:
            problems.append(f"request leaving file://: {url}")
            route.abort()

    page.route("**/*", guard)
    page.goto(path.resolve().as_uri(), wait_until="load")
    return page, problems


def _check(page, problems, what: str) -> None:
    "No recorded problem, every image decoded, and axe-core finds no serious or critical violation."
    from axe_playwright_python.sync_playwright import Axe

    broken = page.evaluate(
        "() => Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt || i.src)"
    )
    assert not broken, f"{what}: images that did not load: {broken}"
    assert page.title(), f"{what}: no <title>"
    results = Axe().run(page)
    bad = [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:5]}"
        for v in results.response["violations"]
        if v.get("impact") in ("serious", "critical")
    ]
    assert not bad, f"{what}: axe-core violations:\n" + "\n".join(bad)
    assert not problems, f"{what}: " + "; ".join(problems)


def test_audit_report_in_the_browser(browser, adult_result, tmp_path):
    from fairlib.htmlreport import write_report

    path = write_report(
        adult_result, tmp_path / "audit_report.html", data_description="UCI Adult, both splits."
    )
    page, problems = _open(browser, path)
    try:
        n_img = page.evaluate("() => document.images.length")
        assert n_img == 2, f"expected the audit and VFR figures, found {n_img} images"
        assert page.evaluate("() => document.documentElement.lang") == "en"
        headline = page.inner_text("#headline")
        assert "verdicts" in headline and "unstable" in headline
        _check(page, problems, "audit report")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        out = ARTIFACTS / "audit_report.png"
        page.screenshot(path=str(out), full_page=True)
        assert out.stat().st_size > 10_000
        assert int.from_bytes(out.read_bytes()[16:20], "big") == WIDTH  # PNG IHDR width
    finally:
        page.close()


def test_real_data_audit_report_in_the_browser(browser, adult_result, tmp_path):
    from fairlib.htmlreport import write_report

    path = write_report(adult_result, tmp_path / "audit_report_real.html", real=True, figures=False)
    page, problems = _open(browser, path)
    try:
        _check(page, problems, "audit report (real=True)")
    finally:
        page.close()


def test_vfr_model_report_in_the_browser(browser, tmp_path):
    from fairlib.core import atomic_write
    from fairlib.vfr.report import audit_report_html

    path = atomic_write(
        tmp_path / "m.html",
        audit_report_html(vfr_reliability_example(), model="m", source="synthetic"),
    )
    page, problems = _open(browser, path)
    try:
        _check(page, problems, "VFR per-model report")
    finally:
        page.close()


def test_runs_index_in_the_browser(browser, tmp_path):
    "runs/index.html with one paper: a scoreboard, a table and a figure (the figure is a file:// image beside it)."
    from matplotlib.figure import Figure

    from fairlib.runner.runindex import build_index

    fig_dir = tmp_path / "figures" / "demo"
    fig_dir.mkdir(parents=True)
    pd.DataFrame({"claim": ["a", "b"], "status": ["exact", "differs"]}).to_csv(
        fig_dir / "claims.csv", index=False
    )
    pd.DataFrame({"metric": ["SPD", "DI"], "value": [0.12, 0.81]}).to_csv(
        fig_dir / "headline.csv", index=False
    )
    (fig_dir / "headline.md").write_text("**Headline numbers**\n\nSource: synthetic twins\n")
    f = Figure(figsize=(4, 3))
    f.subplots().plot([0, 1], [0, 1])
    f.savefig(fig_dir / "curve.png")
    nb = tmp_path / "01_demo.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    done = [
        dict(
            paper="demo",
            stem="01_demo",
            output=nb,
            final_fig_dir=str(fig_dir),
            params=dict(profile="quick", fig_dir=str(fig_dir)),
            seconds=1.0,
        )
    ]
    path = build_index(done, tmp_path / "index.html")
    page, problems = _open(browser, path)
    try:
        assert page.evaluate("() => document.images.length") == 1
        _check(page, problems, "runs/index.html")
    finally:
        page.close()


def test_the_checks_catch_a_network_request_and_a_broken_image(browser, tmp_path):
    "The guard itself: a page that asks for an http image is reported, and the image counts as not loaded."
    path = tmp_path / "bad.html"
    path.write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>bad</title></head><body><main>'
        '<img src="http://203.0.113.1/x.png" alt="remote"></main></body></html>'
    )
    page, problems = _open(browser, path)
    try:
        with pytest.raises(AssertionError, match="remote"):
            _check(page, problems, "bad page")
        assert any("request leaving file://: http://203.0.113.1/x.png" in p for p in problems)
    finally:
        page.close()


@pytest.mark.parametrize("width", [375, 1280])
def test_audit_report_has_no_axe_violation_and_fits_a_phone(browser, adult_result, tmp_path, width):
    """Issue 35: axe-core finds no violation of any impact, and at a phone's width (375 px) the page itself never
    scrolls sideways: every table wider than the page sits in its own focusable scroll box."""
    from axe_playwright_python.sync_playwright import Axe

    from fairlib.htmlreport import write_report

    path = write_report(adult_result, tmp_path / f"audit_report_{width}.html")
    page = browser.new_page(viewport={"width": width, "height": 800})
    try:
        page.goto(path.resolve().as_uri(), wait_until="load")
        violations = Axe().run(page).response["violations"]
        assert not violations, [
            (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations
        ]
        sw, cw = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert sw <= cw, f"the page scrolls sideways at {width} px: {sw} > {cw}"
        loose = page.evaluate(
            "() => Array.from(document.querySelectorAll('table')).filter(t => !t.closest('.table-box')).length"
        )
        assert loose == 0, f"{loose} table(s) outside a scroll box"
        boxes = page.evaluate(
            "() => Array.from(document.querySelectorAll('.table-box')).map(b => [b.tabIndex, b.getAttribute('role'),"
            " b.getAttribute('aria-label'), b.scrollWidth > b.clientWidth])"
        )
        assert boxes and all(t == 0 and r == "region" and a for t, r, a, _ in boxes)
        if width == 375:
            assert any(wide for *_, wide in boxes), (
                "at 375 px some table should need its own scroll"
            )
            assert page.evaluate(
                "() => document.getElementById('what-to-do').getBoundingClientRect().top"
            ) < page.evaluate(
                "() => document.getElementById('metrics').getBoundingClientRect().top"
            )
    finally:
        page.close()
