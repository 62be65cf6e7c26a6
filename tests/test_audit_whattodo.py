"""The "what to do" section (issue 35) that ends the text report and opens the HTML report: reliable verdicts, the
ones that are not and how many more records would make them so (the size plan's numbers, printed the same way), the
groups too small to judge, the undefined metrics and why; and, without the flip rate, that reliability is unknown."""

from __future__ import annotations

import re

import numpy as np
import pytest

import fairlib as fl
from fairlib.audittext import what_to_do
from fairlib.sizemodel import _fmt_n


@pytest.fixture(scope="module")
def result():
    "Group a is selected far more often than b (a stable failure), TPRs nearly equal (a shaky verdict); c is tiny."
    rng = np.random.default_rng(3)
    g = np.repeat(["a", "b", "c"], [1500, 1500, 8])
    y = rng.integers(0, 2, len(g))
    sel = np.where(g == "a", 0.6, 0.3)
    p = (rng.random(len(g)) < sel + 0.1 * y).astype(int)
    return fl.audit(
        y,
        p,
        sensitive_features=g,
        metrics=["SPD", "DI", "EOpp", "FNRP"],
        thresholds={"EOpp": 0.3},
        vfr=True,
        size_plan=True,
        n_resamples=200,
        seed=1,
    )


def test_every_verdict_is_sorted_once(result):
    todo = what_to_do(result)
    m = result.to_frame().set_index("metric")
    stable = [k for k in m.index if m.loc[k, "vfr_stability"] == "Stable"]
    shaky = [
        k
        for k in m.index
        if m.loc[k, "vfr_stability"] != "Stable" and m.loc[k, "verdict"] != "Undefined"
    ]
    assert stable and shaky, m.vfr_stability  # the fixture gives both kinds
    reliable = todo[0]
    assert reliable.startswith("- Reliable (stable; act on these): group: ")
    for k in stable:
        assert f"{k} ({m.loc[k, 'verdict']})" in reliable
    lines = [t for t in todo if t.startswith("- Not yet reliable: group: ")]
    assert sorted(t.split(": ")[2].split(" (")[0] for t in lines) == sorted(shaky)
    plan = result.required_size().set_index("metric")
    for t in lines:
        k = t.split(": ")[2].split(" (")[0]
        need = plan.loc[k, "n_required"]
        assert (
            f"needs {_fmt_n(need)} records, {_fmt_n(need - result.n)} more than the {result.n:,} audited"
            in t
        )
        assert _fmt_n(need) in str(
            result
        )  # the same number, printed the same way, in the plan's lines
    assert any(t.startswith("- Too small to judge") and "group: c" in t for t in todo)
    assert not re.search(r"\bc \(n=", " ".join(todo))  # its size is not given


def test_undefined_metrics_say_why_and_without_vfr_reliability_is_unknown():
    y = np.r_[np.ones(50), np.zeros(50), np.zeros(60)].astype(
        int
    )  # group b has no positive: TPR undefined
    p = np.r_[
        np.ones(30), np.zeros(20), np.ones(10), np.zeros(40), np.ones(20), np.zeros(40)
    ].astype(int)
    r = fl.audit(y, p, sensitive_features=["a"] * 100 + ["b"] * 60, metrics=["SPD", "EOpp"])
    todo = what_to_do(r)
    assert todo[0].startswith("- Reliability not assessed: run with vfr=True")
    assert "- Failing: group: SPD." in todo or "- Passing: group: SPD." in todo
    assert (
        "- Undefined: group: EOpp: TPR undefined for group(s) ['b']: no records with y_true == 1."
        in todo
    )
    text = str(r)
    assert text.split("what to do:\n")[1].startswith("- Reliability not assessed")


def test_html_opens_with_the_same_section(result):
    html = result.to_html(figures=False)
    items = re.findall(
        r"<li>(.*?)</li>", html.split('id="todo-list"')[1].split("</ul>")[0], flags=re.S
    )
    import html as h

    assert [h.unescape(" ".join(i.split())) for i in items] == [t[2:] for t in what_to_do(result)]
    assert html.index("What to do") < html.index("Metrics and verdicts")
