"""Small counts in the documents an audit team shares (issue 35): by default no group size from 1 to 10 can be read
from the text or HTML report, nor recovered by subtraction (the records minus a view's other groups, an attribute's
group minus the other cells of the intersection); an explicit option shows every size; the JSON is full-fidelity and
says so, and its suppressed, shareable form hides every count from 1 to 10 (and what would give one back) and reads
back. The attacker here is written independently of fairlib.suppression: it parses the documents and solves every
sum relation it knows."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import fairlib as fl

SMALL = range(1, 11)


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(5)
    race = np.repeat(["W", "B", "A", "N"], [520, 310, 44, 7])
    sex = np.where(rng.random(len(race)) < 0.5, "F", "M")
    sex[race == "A"] = ["F"] * 38 + ["M"] * 6  # A/M: 6 records
    y, p = rng.integers(0, 2, len(race)), rng.integers(0, 2, len(race))
    return fl.audit(y, p, sensitive_features={"race": race, "sex": sex}, vfr=True, n_resamples=60)


def _truth(r):
    "{(view, group label): size} from the result's own full table."
    out = {}
    for v in r.views:
        bv = r.by_view(v)
        for k, s in zip(bv.index, bv.support):
            out[(v, "/".join(map(str, k)) if isinstance(k, tuple) else str(k))] = int(s)
    return out


def _relations(r) -> list[tuple[list, object]]:
    "Sum relations a reader knows: each view's sizes sum to the records; each attribute group = its cells' sum."
    truth = _truth(r)
    rels = [([k for k in truth if k[0] == v], r.n) for v in r.views]
    inter = r.views[-1]
    for i, a in enumerate(r.sensitive_features):
        for k in [k for k in truth if k[0] == a]:
            cells = [c for c in truth if c[0] == inter and c[1].split("/")[i] == k[1]]
            rels.append(
                (cells, k)
            )  # sum of the cells = the attribute group's size (itself maybe unknown)
    return rels


def _solve(shown: dict, r) -> dict:
    "Every size the reader can derive from the shown ones and the sum relations (one unknown at a time)."
    known = dict(shown)
    changed = True
    while changed:
        changed = False
        for parts, total in _relations(r):
            tot = total if isinstance(total, int) else known.get(total)
            unknown = [p for p in parts if p not in known]
            if isinstance(total, tuple) and tot is None:
                if not unknown:  # the group is the sum of its shown cells
                    known[total] = sum(known[p] for p in parts)
                    changed = True
                continue
            if len(unknown) == 1:
                known[unknown[0]] = tot - sum(known[p] for p in parts if p in known)
                changed = True
    return known


def _text_sizes(text: str, r) -> dict:
    "{(view, group): size} read from the text report's per-group tables (a size shown as a number)."
    out = {}
    for v in r.views:
        block = text.split(f"per group ({v}):\n")[1].split("\n\n")[0].splitlines()[2:]
        attrs = len(v.split(" × "))
        last = None
        for line in block:
            cols = line.split()
            if attrs == 2 and len(cols) == 9:  # a MultiIndex row: the first level is printed once
                last = cols[0]
                cols = cols[1:]
            label = cols[0] if attrs == 1 else f"{last}/{cols[0]}"
            if re.fullmatch(r"\d+", cols[1]):
                out[(v, label)] = int(cols[1])
    return out


def test_text_report_shows_no_small_size_and_none_can_be_recovered(result):
    truth = _truth(result)
    assert any(s in SMALL for s in truth.values())  # the fixture has small cells (N; A/M)
    text = str(result)
    shown = _text_sizes(text, result)
    assert {("race × sex", "W/F"), ("race × sex", "W/M")} <= set(
        shown
    )  # the parser reads the intersection too
    assert shown and not [k for k, s in shown.items() if s in SMALL]
    assert all(truth[k] == s for k, s in shown.items())  # what is shown is true
    derived = _solve(shown, result)
    leaked = {k: s for k, s in derived.items() if s in SMALL}
    assert not leaked, leaked
    assert not re.search(r"\(n=([1-9]|10)\)", text) and "n=<11" in text
    private = result.summary(show_small_counts=True)
    assert _text_sizes(private, result) == truth  # the analyst's private copy shows every size


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self._cell, self._in = [], None, False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append(dict(id=dict(attrs).get("id"), rows=[]))
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell, self._in = "", True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._in:
            self.tables[-1]["rows"][-1].append(" ".join(self._cell.split()))
            self._in = False

    def handle_data(self, data):
        if self._in:
            self._cell += data


def test_html_report_shows_no_small_size_and_none_can_be_recovered(result):
    p = _Tables()
    p.feed(result.to_html(figures=False))
    shown = {}
    for i, v in enumerate(result.views):
        t = next(
            t
            for t in p.tables
            if t["id"].startswith("group-table") and t["id"].endswith(v.replace(" × ", "-").lower())
        )
        head = t["rows"][0]
        col = head.index("Records")
        for row in t["rows"][1:]:
            if re.fullmatch(r"[\d,]+", row[col]):
                shown[(v, row[0])] = int(row[col].replace(",", ""))
    assert shown and not [k for k, s in shown.items() if s in SMALL]
    assert not {k: s for k, s in _solve(shown, result).items() if s in SMALL}
    ex = [t for t in p.tables if t["id"].startswith("excluded-table")]
    assert ex and all(
        row[1] in ("<11", "suppressed") or int(row[1].replace(",", "")) >= 11
        for t in ex
        for row in t["rows"][1:]
    )


def test_json_is_full_fidelity_and_its_shared_form_hides_small_counts(result, tmp_path):
    full = json.loads(result.to_json())
    assert full["__fairlib__"]["form"] == "full"
    back = fl.AuditResult.from_json(result.to_json())
    pd.testing.assert_frame_equal(back.groups, result.groups)
    shared_text = result.to_json(form="suppressed")
    d = json.loads(shared_text)
    assert d["__fairlib__"]["form"] == "suppressed" and d["form"] == "suppressed"
    g = pd.DataFrame(d["groups"]["__frame__"]["data"], columns=d["groups"]["__frame__"]["columns"])
    for c in ("support", "n", "positives", "predicted_positives"):
        v = pd.to_numeric(g[c], errors="coerce")
        assert not v.isin(SMALL).any(), c
    # no count 1..10 comes back as a rate times a shown denominator either
    for rate, den in (
        ("selection_rate", "n"),
        ("base_rate", "n"),
        ("TPR", "positives"),
        ("PPV", "predicted_positives"),
    ):
        k = pd.to_numeric(g[rate], errors="coerce") * pd.to_numeric(g[den], errors="coerce")
        assert not np.round(k, 6).isin(SMALL).any(), rate
    assert all(s is None or s >= 11 for s in d["excluded"].values())
    assert "(n=6)" not in shared_text and "(n=7)" not in shared_text
    shared = fl.AuditResult.from_json(shared_text)
    assert shared.form == "suppressed" and shared.verdicts == result.verdicts
    pd.testing.assert_frame_equal(
        pd.DataFrame(shared.to_frame()[["view", "metric", "value", "verdict", "vfr"]]),
        pd.DataFrame(result.to_frame()[["view", "metric", "value", "verdict", "vfr"]]),
    )
    assert "suppressed" in str(shared) and "suppressed" in shared.to_html(figures=False)
    path = shared.save(tmp_path / "s.json")
    assert json.loads(path.read_text())["__fairlib__"]["form"] == "suppressed"
    with pytest.raises(fl.FairlibInputError, match="already suppressed"):
        shared.to_json(form="full")


def test_real_data_report_refuses_the_private_option(result):
    with pytest.raises(fl.FairlibInputError) as e:
        result.to_html(real=True, show_small_counts=True)
    assert e.value.argument == "show_small_counts"
