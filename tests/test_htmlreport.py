"""The standalone audit report (fairlib.htmlreport): content, escaping, precision, plain-language VFR, excluded groups,
glossary, accessibility markup, small-cell masking and no network references. The browser and axe-core check is in
test_htmlreport_browser.py."""

from __future__ import annotations
import re
from html.parser import HTMLParser
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import fairlib as fl
from fairlib.audit import AuditResult
from fairlib.core import FairlibInputError
from fairlib.htmlreport import render, report_html, write_report


class _Page(HTMLParser):
    "Tables (caption, head cells, body rows as (scope, text) lists), title, lang, images, links and visible text."

    def __init__(self):
        super().__init__()
        self.lang = self.title = None
        self.tables, self.imgs, self.urls, self.text, self.terms = [], [], [], [], []
        self._open, self._buf, self._in_head, self._in_style = [], "", False, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        if tag == "html":
            self.lang = a.get("lang")
        elif tag == "style":
            self._in_style = True
        elif tag == "img":
            self.imgs.append(a)
        elif tag == "table":
            self.tables.append(dict(caption=None, head=[], rows=[], id=a.get("id")))
        elif tag == "thead":
            self._in_head = True
        elif tag == "tbody":
            self._in_head = False
        elif tag == "tr" and self.tables and not self._in_head:
            self.tables[-1]["rows"].append([])
        if tag in ("title", "caption", "th", "td", "dt"):
            self._open.append((tag, a.get("scope")))
            self._buf = ""

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False
        if self._open and self._open[-1][0] == tag:
            _, scope = self._open.pop()
            s = " ".join(self._buf.split())
            if tag == "title":
                self.title = s
            elif tag == "caption":
                self.tables[-1]["caption"] = s
            elif tag == "dt":
                self.terms.append(s)
            elif self._in_head:
                self.tables[-1]["head"].append((scope, s))
            else:
                self.tables[-1]["rows"][-1].append((tag, scope, s))

    def handle_data(self, data):
        if not self._in_style:
            self.text.append(data)
        self._buf += data


def _parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    p.visible = " ".join(" ".join(p.text).split())
    return p


def _table(p: _Page, tid: str) -> dict:
    return next(t for t in p.tables if t["id"] == tid)


def _column(t: dict, name: str) -> dict:
    "{row header: cell text} of one column."
    i = [s for _, s in t["head"]].index(name)
    return {r[0][2]: r[i][2] for r in t["rows"]}


@pytest.fixture(scope="module")
def data():
    "Three groups of known rates and one group too small to audit."
    rng = np.random.default_rng(7)
    sizes = dict(north=400, south=300, east=250, tiny=6)
    g = np.concatenate([[k] * n for k, n in sizes.items()])
    y = rng.integers(0, 2, len(g))
    bias = pd.Series(g).map(dict(north=0.55, south=0.35, east=0.45, tiny=0.5)).to_numpy()
    p = (rng.random(len(g)) < bias).astype(int)
    return pd.DataFrame(dict(region=g, y=y, p=p))


@pytest.fixture(scope="module")
def result(data):
    return fl.audit(
        "y", "p", sensitive_features="region", data=data, vfr=True, n_resamples=60, seed=3
    )


@pytest.fixture(scope="module")
def page(result):
    return report_html(result, figures=False)


def test_document_is_accessible_markup(page, result):
    p = _parse(page)
    assert p.lang == "en" and p.title
    assert (
        re.search(r"<main\b", page) and re.search(r"<header\b", page) and 'href="#content"' in page
    )
    assert p.tables and all(t["caption"] for t in p.tables), "a table without a caption"
    for t in p.tables:
        assert all(scope == "col" for scope, _ in t["head"]), t["caption"]
        for row in t["rows"]:
            tag, scope, _ = row[0]
            assert tag == "th" and scope == "row", t["caption"]
            assert all(c[0] == "td" for c in row[1:])


def test_headline_counts_verdicts_and_their_stability(page, result):
    m = result.metrics
    v, s = list(m.verdict), list(m.vfr_stability)
    expect = (
        f"{len(v)} verdicts: {v.count('Pass')} pass, {v.count('Fail')} fail, {v.count('Undefined')} undefined; "
        f"stability: {s.count('Stable')} stable, {s.count('Unstable')} unstable, "
        f"{s.count('Undetermined')} undetermined, "
        f"{s.count('Undefined')} undefined."
    )
    assert expect in _parse(page).visible
    unstable = m.vfr.astype(float) > 0.10
    assert not (
        unstable & (m.vfr_stability == "Stable")
    ).any()  # one rule: a flip rate above τ is never stable


def test_metric_values_at_three_significant_figures(page, result):
    col = _column(_table(_parse(page), "metric-table"), "Value")
    for name, value in zip(result.metrics.metric, result.metrics.value):
        shown = col[name]
        if np.isnan(value):
            assert shown == "Undefined"
            continue
        assert len(shown.replace(",", "").replace(".", "").lstrip("-0")) <= 3, shown
        assert float(shown) == pytest.approx(value, rel=5e-3), (name, shown, value)
    for tok in re.findall(
        r"\d[\d,]*\.\d+", _parse(page).visible
    ):  # every decimal shown: 3 significant figures at most
        assert len(tok.replace(",", "").replace(".", "").lstrip("0")) <= 3, tok


def test_binding_groups_are_the_extremes_of_the_rate(page, data):
    "SPD binds the groups with the lowest and highest selection rate, computed here from the raw rows."
    inc = data[data.region != "tiny"]
    sel = inc.groupby("region").p.mean()
    tpr = inc[inc.y == 1].groupby("region").p.mean()
    col = _column(_table(_parse(page), "metric-table"), "Groups that bind")
    assert col["SPD"] == f"{sel.idxmin()} (lowest) vs {sel.idxmax()} (highest)"
    assert col["EOpp"] == f"{tpr.idxmin()} (lowest) vs {tpr.idxmax()} (highest)"
    assert f"highest: {sel.idxmax()} ({float(f'{sel.max():.3g}'):.3g})" in _parse(page).visible


def test_excluded_group_listed_its_small_size_hidden_by_default(page, result):
    t = _table(_parse(page), "excluded-table")
    assert [r[0][2] for r in t["rows"]] == ["tiny"]
    assert t["rows"][0][1][2] == "<11"
    private = _table(
        _parse(report_html(result, figures=False, show_small_counts=True)), "excluded-table"
    )
    assert private["rows"][0][1][2] == "6"
    # the smallest other group is hidden too: the total minus the shown sizes would give the 6 back
    records = _column(_table(_parse(page), "group-table"), "Records")
    assert records["tiny"] == "<11" and sorted(records.values()).count("suppressed") == 1


def test_human_column_names_only(page):
    text = _parse(page).visible
    for raw in (
        "vfr_ci_low",
        "vfr_ci_high",
        "vfr_n_undefined",
        "vfr_verdict",
        "selection_rate",
        "vfr_reason",
    ):
        assert raw not in text
    head = [s for _, s in _table(_parse(page), "group-table")["head"]]
    assert "Selection rate" in head and "True positive rate" in head and "Records" in head


def test_glossary_names_the_codes(page, result):
    terms = _parse(page).terms
    for t in (
        "Verdict",
        "Verdict flip rate (VFR)",
        "Value interval (95%, resamples)",
        "Selection rate",
        "Excluded group",
    ):
        assert t in terms
    for m in result.metrics.metric:
        assert m in terms


def _result_with(vfr: float, n_undefined: int = 0, verdict="Pass", value=0.05, reason=None):
    "A hand-made audit result with one metric whose flip rate is known."
    metrics = pd.DataFrame(
        [
            dict(
                metric="SPD",
                value=value,
                threshold=0.1,
                rule="|x| <= 0.1",
                verdict=verdict,
                reason=reason,
                vfr=vfr,
                vfr_verdict=verdict,
                vfr_ci_low=0.01,
                vfr_ci_high=0.12,
                vfr_n_undefined=n_undefined,
                vfr_reason=None,
            )
        ]
    )
    groups = pd.DataFrame(
        dict(
            g=["a", "b"],
            support=[120, 80],
            selection_rate=[0.5, 0.45],
            TPR=[0.6, 0.5],
            included=[True, True],
        )
    )
    return AuditResult(
        metrics,
        groups,
        {},
        ["g"],
        200,
        30,
        {},
        None,
        "ece_gap",
        dict(n_resamples=200, resample_size=200, seed=0),
    )


def test_vfr_in_plain_words():
    p = _parse(report_html(_result_with(0.27), figures=False))
    assert "This verdict flips in 27% of 200 resamples" in p.visible
    assert "Unstable" in _column(_table(p, "metric-table"), "Stability")["SPD"]
    assert "1 unstable" in p.visible
    p = _parse(report_html(_result_with(0.0), figures=False))
    assert "never flipped" in p.visible and "0 unstable" in p.visible
    p = _parse(
        report_html(_result_with(0.1, n_undefined=40), figures=False)
    )  # at the threshold: still stable
    assert (
        "of the 160 resamples where the metric is defined" in p.visible
        and "0 unstable" in p.visible
    )


def test_undefined_metric_says_undefined_with_its_reason():
    "EOpp needs positives in every group; a group without any is undefined with fairlib's reason, never 0."
    rng = np.random.default_rng(0)
    df = pd.DataFrame(dict(g=["a"] * 60 + ["b"] * 60, p=rng.integers(0, 2, 120)))
    df["y"] = np.where(df.g == "b", 0, rng.integers(0, 2, 120))
    r = fl.audit("y", "p", sensitive_features="g", data=df, metrics=["SPD", "EOpp"])
    assert r.verdicts["EOpp"] == "Undefined"
    p = _parse(report_html(r, figures=False))
    t = _table(p, "metric-table")
    assert (
        _column(t, "Value")["EOpp"] == "Undefined" and "Undefined" in _column(t, "Verdict")["EOpp"]
    )
    assert "no records with y_true == 1" in p.visible
    assert "stability not assessed" in p.visible


def test_text_is_escaped():
    bad = "<script>alert(1)</script>"
    df = pd.DataFrame(dict(g=[bad] * 50 + ["b&c"] * 50, y=[0, 1] * 50, p=[1, 0, 0, 1] * 25))
    r = fl.audit("y", "p", sensitive_features="g", data=df, metrics=["SPD"])
    html = report_html(r, figures=False, title='A "quoted" <title>', data_description="x < y & z")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    p = _parse(html)
    assert p.title == 'A "quoted" <title>' and "x < y & z" in p.visible and "b&c" in p.visible


def test_no_network_references(page, result):
    html = report_html(result)  # with the figures
    p = _parse(html)
    assert not [u for u in p.urls if re.match(r"(?i)\s*(https?:)?//", u)]
    assert not re.search(r"(?i)(src|href)\s*=\s*[\"']?\s*(https?:)?//", html)
    assert not re.search(r"(?i)@import|url\(", html)
    assert len(p.imgs) == 2 and all(i["src"].startswith("data:image/png;base64,") for i in p.imgs)
    alts = [i["alt"] for i in p.imgs]
    fails = [m for m, v in result.verdicts.items() if v == "Fail"]
    assert all(len(a) > 40 for a in alts) and all(m in alts[0] for m in fails)


def test_real_mode_masks_small_group_counts(result):
    "With real=True no group count from 1 to 10 appears: fairlib's own scanner of published tables finds none."
    from fairlib.report import _TEXT_SMALL, _html_frames, _frame_findings

    shown = report_html(result, figures=False, show_small_counts=True)
    real = report_html(result, figures=False, real=True)
    assert _frame_findings(
        next(f for f in _html_frames(shown) if "Records" in f.columns), "x", ["Records"], set(), 11
    )
    for df in _html_frames(real):
        cols = [c for c in df.columns if c in ("Records",)]
        assert not _frame_findings(df, "x", cols, set(), 11), df
    assert not _TEXT_SMALL.search(real)
    assert "suppressed" in _parse(real).visible.lower() and "Real data" in real
    with_figures = report_html(
        result, real=True
    )  # the small group is not drawn, so the figures stay
    assert "<img" in with_figures and "tiny" not in " ".join(
        i["alt"] for i in _parse(with_figures).imgs
    )
    assert "for the 2 groups of region drawn" in with_figures
    with pytest.raises(FairlibInputError, match="show_small_counts"):
        report_html(result, real=True, show_small_counts=True)


def test_size_plan_rendered_when_present(result):
    plan = pd.DataFrame(
        dict(
            metric=["SPD", "EOpp"],
            n_required=[1234.0, np.nan],
            ci_low=[900.0, np.nan],
            ci_high=[1800.0, np.nan],
            reachable=[True, False],
            n_available=[956, 956],
            target_vfr=[0.1, 0.1],
            cv_cutoff=[0.05, 0.05],
            method=["subsample", "extrapolated"],
            reason=[None, "CV stays above the cutoff"],
        )
    )
    r = replace(result, size_plan=plan, metrics=pd.DataFrame(result.metrics))
    t = _table(_parse(report_html(r, figures=False)), "size-plan-table")
    assert _column(t, "Records needed for a stable verdict") == {
        "SPD": "1,234",
        "EOpp": "Not reachable",
    }
    assert _column(t, "Interval of records needed (95%)")["SPD"] == "900 to 1,800"
    assert _column(t, "View") == {"SPD": "region", "EOpp": "region"}
    assert (
        "not reachable with the records you have"
        in _column(t, "Reachable with the records you have")["EOpp"]
    )
    assert "size-plan-table" not in report_html(result, figures=False)


def test_write_report_and_render(tmp_path, result):
    out = write_report(result, tmp_path / "r.html", figures=False, title="T")
    assert out == tmp_path / "r.html" and out.read_text(encoding="utf-8") == report_html(
        result, figures=False, title="T"
    )
    with pytest.raises(Exception, match="page_title"):
        render("base.html.j2")
    with pytest.raises(FairlibInputError, match="result"):
        report_html(pd.DataFrame())
