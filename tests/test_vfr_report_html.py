"""The per-model HTML audit report says what each result means: headline, glossary, captions, values, notes once."""

from html.parser import HTMLParser

import numpy as np
import pandas as pd

from fairlib.counts import AUDIT_METRICS
from fairlib.vfr.report import audit_report_html
from fairlib.vfr.tiers import reliability_table

MISSING = "12 of 80 fold × attribute verdicts missing (small group or undefined)"


class _Page(HTMLParser):
    "Collects tables (caption, header cells, rows of cell texts), the headline paragraph and the glossary terms."

    def __init__(self):
        super().__init__()
        self.tables, self.stack, self.text, self.where = [], [], "", None
        self.headline, self.terms, self.lang = "", [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.lang = a.get("lang")
        if tag == "table":
            self.tables.append(dict(caption="", head=[], rows=[]))
        if tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        if tag == "p" and a.get("id") == "headline":
            self.where = "headline"
        if tag in ("caption", "th", "td", "dt"):
            self.stack.append(tag)
            self.text = ""

    def handle_endtag(self, tag):
        if tag == "p" and self.where == "headline":
            self.where = None
        if self.stack and tag == self.stack[-1]:
            self.stack.pop()
            s = " ".join(self.text.split())
            if tag == "caption":
                self.tables[-1]["caption"] = s
            elif tag == "dt":
                self.terms.append(s)
            else:
                self.tables[-1]["rows"][-1].append(s)
                if tag == "th" and len(self.tables[-1]["rows"]) == 1:
                    self.tables[-1]["head"].append(s)

    def handle_data(self, data):
        self.text += data
        if self.where == "headline":
            self.headline += data


def _table():
    cells = [  # metric, attribute, value, verdict, vfr, n_star, sd
        ("SPD", "race", 0.25, "Fail", 0.31, np.nan, 0.02),
        ("SPD", "sex", 0.02, "Pass", 0.0, 800, 0.004),
        ("Theil", "race", 0.00042, "Pass", 0.0, 500, 0.0001),
        ("Theil", "sex", 0.00017, "Pass", 0.0, 500, 0.0001),
        ("DI", "race", 0.91, "Pass", 0.05, 1500, 0.01),
        ("DI", "sex", 0.95, "Pass", 0.02, 900, 0.01),
    ]
    a1 = pd.DataFrame(
        [
            dict(model="m", metric=m, attribute=a, value=v, verdict=vd, dominant_verdict=vd, vfr=f)
            for m, a, v, vd, f, *_ in cells
        ]
    )
    a2 = pd.DataFrame(
        [
            dict(model="m", metric=m, attribute=a, n_star=n, sd=s, sd_size=n if n == n else 2000)
            for m, a, _, _, _, n, s in cells
        ]
    )
    a3 = pd.DataFrame(
        dict(
            model="m",
            metric=["SPD", "Theil", "DI"],
            kappa=[0.1, np.nan, 0.8],
            degenerate=[False, True, False],
            reason=[MISSING, "every fold agreed", None],
        )
    )
    return reliability_table(a1, a2, a3)


def _parse(html):
    p = _Page()
    p.feed(html)
    return p


def test_headline_counts_tiers_and_names_the_worst_cell():
    t = _table()
    p = _parse(audit_report_html(t, model="m"))
    counts = t.tier.value_counts()
    assert p.headline.strip(), "no headline paragraph"
    for tier, n in counts.items():
        assert f"{n} {tier}" in p.headline
    worst = (
        t[t.tier != "Undefined"].sort_values("vfr").iloc[-1]
    )  # SPD by race: VFR and N* and kappa violated
    assert worst.tier == "Catastrophic-Instability"
    assert f"Worst finding: {worst.tier} for SPD by race" in p.headline


def test_glossary_names_every_code_and_threshold():
    html = audit_report_html(_table(), model="m", tau_vfr=0.15, n_field=1234, kappa_min=0.3)
    p = _parse(html)
    for code in ("VFR", "N*", "SD", "κ", "SPD", "Theil", "DI"):
        assert code in p.terms, code
    assert "0.15" in html and "1,234" in html and "= 0.3" in html
    for m in ("SPD", "Theil", "DI"):
        assert f"{AUDIT_METRICS[m].threshold:g}" in html


def test_tables_have_captions_headers_and_the_sd_column():
    t = _table()
    p = _parse(audit_report_html(t, model="m"))
    assert p.lang == "en"
    assert all(tb["caption"] for tb in p.tables) and len(p.tables) == 2
    main = p.tables[-1]
    assert "SD of the metric (at size)" in main["head"] and "value (cohort)" in main["head"]
    col = main["head"].index("SD of the metric (at size)")
    body = main["rows"][1:]
    assert len(body) == len(t)
    sds = {r[col] for r in body}
    assert "0.0200 at 2,000" in sds and "0.0040 at 800" in sds


def test_theil_shows_its_value_not_only_undefined():
    p = _parse(audit_report_html(_table(), model="m"))
    main = p.tables[-1]
    h = main["head"]
    theil = [r for r in main["rows"][1:] if r[h.index("metric")] == "Theil"]
    assert len(theil) == 2
    assert {r[h.index("value (cohort)")] for r in theil} == {"0.00042", "0.00017"}
    assert all(r[h.index("tier")] == "Undefined" for r in theil)


def test_theil_row_is_not_painted_grey():
    html = audit_report_html(_table(), model="m")
    row = [x for x in html.split("<tr")[1:] if "<td>Theil</td>" in x][0]
    assert row.startswith(">")  # the row itself carries no colour
    assert row.count("background") == 1  # only the tier cell carries the tier colour


def test_missing_verdicts_note_said_once():
    html = audit_report_html(_table(), model="m")
    assert html.count("12 of 80") == 1
    assert "every fold agreed" in html


def test_real_report_masks_small_counts_in_its_notes():
    "A report written from credentialed data never prints a count under 11 (the notes carry excluded group sizes)."
    import re

    from fairlib.vfr.report import audit_report_html

    t = _table().assign(vfr_reason="excluded for small support: A (n=1), B (n=17)")
    shown = audit_report_html(t, model=t.model.iloc[0])
    assert "(n=1)" in shown  # interactive: the caller's own counts
    real = audit_report_html(t, model=t.model.iloc[0], real=True)
    assert not re.search(r"\bn\s*=\s*([1-9]|10)\b(?![\d.,])", real) and "(n=17)" in real
