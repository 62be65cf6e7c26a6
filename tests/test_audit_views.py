"""Per-attribute and intersectional views (issue 35): each view equals the audit of that attribute alone (values,
groups, flip rates bit-identical for the same seed); the view is named on every verdict in the frames, the text, the
HTML and the JSON; reference groups; custom metric functions; metric names in any case; renamed columns; the JSON
round trip of the new fields and the refusal of a file whose views disagree; the CLI's --reference."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import fairlib as fl
from fairlib.cli import main
from fairlib.core import FairlibInputError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 3000
    d = pd.DataFrame(
        {
            "race": rng.choice(["W", "B", "A", "N"], n, p=[0.6, 0.25, 0.145, 0.005]),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    d["y"] = rng.integers(0, 2, n)
    d["p"] = (
        rng.random(n) < np.where(d.race == "W", 0.5, 0.35) + np.where(d.sex == "F", 0.05, 0)
    ).astype(int)
    d["s"] = np.clip(0.4 * d.p + 0.6 * rng.random(n), 0, 1)
    return d


@pytest.fixture(scope="module")
def both(data):
    return fl.audit(
        "y",
        "p",
        sensitive_features=["race", "sex"],
        data=data,
        y_prob="s",
        vfr=True,
        n_resamples=100,
        seed=4,
    )


def test_each_attribute_view_is_the_audit_of_that_attribute_alone(data, both):
    for a in ("race", "sex"):
        alone = fl.audit(
            "y", "p", sensitive_features=a, data=data, y_prob="s", vfr=True, n_resamples=100, seed=4
        )
        pd.testing.assert_frame_equal(
            pd.DataFrame(both.to_frame(a)), pd.DataFrame(alone.to_frame())
        )  # VFR included
        pd.testing.assert_frame_equal(both.by_view(a), alone.by_group)
        pd.testing.assert_frame_equal(both.disparities(a), alone.disparities())
    inter = fl.audit(
        "y", "p", sensitive_features=["race", "sex"], data=data, y_prob="s", views="intersection"
    )
    pd.testing.assert_frame_equal(
        pd.DataFrame(inter.to_frame()).drop(columns="view"),
        pd.DataFrame(both.to_frame("race × sex")).drop(columns="view")[
            list(inter.to_frame().columns[1:])
        ],
    )
    assert both.views == ["race", "sex", "race × sex"]
    assert both.by_view("race").support.sum() == both.by_view("sex").support.sum() == len(data)


def test_views_by_hand_from_the_records(data, both):
    "An attribute view's rates and SPD, counted with pandas from the records."
    for a in ("race", "sex"):
        sel = data.groupby(a).p.mean()
        inc = data[a].value_counts() >= 30
        assert both.by_view(a).selection_rate.to_dict() == pytest.approx(sel.to_dict(), abs=1e-12)
        assert both.value("SPD", view=a) == pytest.approx(
            sel[inc].max() - sel[inc].min(), abs=1e-12
        )
    assert both.excluded_groups("race") == {"N": int((data.race == "N").sum())}


def test_the_view_is_named_everywhere(data, both, tmp_path):
    m = both.to_frame()
    assert m.groupby("view").size().to_dict() == {"race": 10, "sex": 10, "race × sex": 10}
    assert set(both.groups.view) == set(both.views) and set(both.disparity_table.view) == set(
        both.views
    )
    text = str(both)
    for v in both.views:
        assert f"per group ({v}):" in text
    metric_lines = text.split("per metric:\n")[1].split("\n\n")[0].splitlines()[1:]
    assert len(metric_lines) == 30 and all(ln.split()[0] in ("race", "sex") for ln in metric_lines)
    html = both.to_html(figures=False)
    for v in both.views:
        assert f"Verdict of each metric for {v}" in html
    payload = json.loads(both.to_json())
    assert payload["views"] == both.views and "view" in payload["metrics"]["__frame__"]["columns"]
    plan = fl.audit(
        "y", "p", sensitive_features=["race", "sex"], data=data, size_plan=True, n_resamples=60
    )
    assert list(dict.fromkeys(plan.required_size().view)) == plan.views


def test_default_view_keeps_the_one_view_accessors(data, both):
    one = fl.audit("y", "p", sensitive_features="race", data=data)
    assert list(one.verdicts) == list(fl.metricdefs.ALL_METRICS)[:6] + ["FNRP", "FORP", "FDRP"]
    assert both.verdicts == dict(
        zip(both.to_frame("race × sex").metric, both.to_frame("race × sex").verdict)
    )
    assert both.passed == (False if (both.metrics.verdict == "Fail").any() else None)
    assert both.value("spd", view="race x sex") == both.value("SPD")
    with pytest.raises(FairlibInputError, match="its views"):
        both.value("SPD", view="age")


def test_reference_groups(data):
    r = fl.audit(
        "y", "p", sensitive_features=["race", "sex"], data=data, reference={"race": "B", "sex": "F"}
    )
    assert r.reference["race"] == {"group": "B", "chosen": "given"}
    assert r.reference["race × sex"] == {
        "group": "B/F",
        "chosen": "given",
    }  # both given: their cell
    d = r.disparities("race", "TPR").set_index("group")
    tpr = data[data.y == 1].groupby("race").p.mean()
    assert d.loc["W", "ratio"] == pytest.approx(tpr["W"] / tpr["B"], abs=1e-12)
    small = fl.audit(
        "y",
        "p",
        sensitive_features=["race", "sex"],
        data=data,
        reference={"race": "N", "sex": "M"},
        min_support=0,
    )
    assert small.reference["race"]["chosen"] == "given"
    with pytest.raises(FairlibInputError) as e:
        fl.audit(
            "y", "p", sensitive_features="race", data=data, reference={"race": "N"}
        )  # N has < 30 records
    assert e.value.argument == "reference" and "fewer than min_support=30" in e.value.problem
    inter = fl.audit(
        "y",
        "p",
        sensitive_features=["race", "sex"],
        data=data,
        reference={"race × sex": ("N", "F")},
    )
    assert (
        "stands in" in inter.reference["race × sex"]["chosen"]
    )  # too small: the largest cell stands in


def test_custom_metric_functions_and_names_in_any_case(data):
    from sklearn.metrics import precision_score, recall_score

    seen = []

    def weighted_recall(y_true, y_pred, sample_weight=None):
        seen.append(sample_weight is not None)
        return recall_score(y_true, y_pred, sample_weight=sample_weight)

    w = np.ones(len(data))
    r = fl.audit(
        "y",
        "p",
        sensitive_features="race",
        data=data,
        sample_weight=w,
        metrics={"wrecall": weighted_recall, "precision": precision_score, "fnrp": None},
        thresholds={"wrecall": 0.5},
    )
    assert all(seen) and list(r.to_frame().metric) == [
        "FNRP",
        "wrecall",
    ]  # precision: no threshold, no verdict
    row = r.to_frame().set_index("metric").loc["wrecall"]
    tpr = r.by_group.loc[r.by_group.included, "TPR"]
    assert row.value == pytest.approx(tpr.max() - tpr.min(), abs=1e-12) and row.rule == "|x| <= 0.5"
    assert r.by_group.precision.to_dict() == pytest.approx(r.by_group.PPV.to_dict(), abs=1e-12)
    assert "No verdict (custom metrics without a threshold): precision" in str(r)
    assert set(r.disparities(metrics="precision").metric) == {"precision"}
    back = fl.AuditResult.from_json(r.to_json())
    assert back.by_group.precision.tolist() == r.by_group.precision.tolist()
    v = fl.audit(
        "y",
        "p",
        sensitive_features="race",
        data=data,
        metrics=["di", "Eopp"],
        thresholds={"EOPP": 0.2},
    )
    assert list(v.to_frame().metric) == ["DI", "EOpp"] and v.to_frame().threshold.tolist() == [
        0.8,
        0.2,
    ]
    with pytest.raises(FairlibInputError) as e:
        fl.audit("y", "p", sensitive_features="race", data=data, metrics={"bad": 3})
    assert e.value.argument == "metrics"
    with pytest.raises(FairlibInputError, match="more than once"):
        fl.audit("y", "p", sensitive_features="race", data=data, metrics=["DI", "di"])


def test_renamed_columns_read_under_their_old_names(both):
    f = both.to_frame()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert f["vfr_ci_low"].tolist() == f["value_ci_low"].tolist()
        assert (
            f.set_index(["view", "metric"]).loc[("sex", "DI"), "vfr_verdict"]
            == f.dominant_verdict[10]
        )
    assert len(w) == 2 and all(issubclass(x.category, DeprecationWarning) for x in w)
    assert "vfr_ci_low" not in f.columns and "value_ci_low" in f.columns


def test_json_round_trip_and_refusal_of_views_that_disagree(both):
    s = both.to_json()
    back = fl.AuditResult.from_json(s)
    for name in ("metrics", "groups", "disparity_table"):
        pd.testing.assert_frame_equal(
            pd.DataFrame(getattr(back, name)), pd.DataFrame(getattr(both, name))
        )
    assert back.reference == both.reference and back.views == both.views
    d = json.loads(s)
    rows = d["groups"]["__frame__"]["data"]
    cols = d["groups"]["__frame__"]["columns"]
    i = next(
        k
        for k, r in enumerate(rows)
        if r[cols.index("view")] == "race" and r[cols.index("race")] == "W"
    )
    rows[i][cols.index("support")] += (
        1  # one view's size no longer the sum of its cells (nor of the records)
    )
    with pytest.raises(FairlibInputError) as e:
        fl.AuditResult.from_json(json.dumps(d))
    assert e.value.argument == "s" and "support" in e.value.problem
    d = json.loads(s)
    d["views"] = ["race", "age"]
    with pytest.raises(FairlibInputError, match="not a view"):
        fl.AuditResult.from_json(json.dumps(d))


@pytest.mark.slow
def test_a_file_missing_any_column_is_refused_by_its_consistency_check(data):
    """Every column of every frame renamed in turn: the consistency check itself refuses the file with a
    FairlibInputError naming the field (never an AttributeError or KeyError that the loader would have to catch)."""
    import dataclasses

    from fairlib.auditresult import _check_views
    from fairlib.results import _from_jsonable, _restore, _split_header

    r = fl.audit(
        "y",
        "p",
        sensitive_features=["race", "sex"],
        data=data,
        vfr=True,
        n_resamples=30,
        size_plan=True,
        seed=1,
    )
    s, names = r.to_json(), [f.name for f in dataclasses.fields(fl.AuditResult)]
    checked = 0
    for field in ("metrics", "groups", "size_plan", "disparity_table"):
        cols = json.loads(s)[field]["__frame__"]["columns"]
        for c in cols:
            d = json.loads(s)
            d[field]["__frame__"]["columns"] = [x + "_edited" if x == c else x for x in cols]
            _, payload = _split_header(d, "AuditResult", "t")
            vals = {
                k: _restore(fl.AuditResult, k, _from_jsonable(v))
                for k, v in payload.items()
                if k in names
            }
            try:
                edited = fl.AuditResult(**vals)
            except FairlibInputError:
                continue  # the constructor's own declaration refused it
            try:
                _check_views(edited, "t")
            except FairlibInputError as e:
                assert e.argument == "s" and "field `" in e.problem, e.problem
            checked += 1
    assert (
        checked > 40
    )  # most renames reach the check (the count of columns, less the constructor's refusals)


def test_int_attributes_survive_json():
    rng = np.random.default_rng(2)
    g = {"a": rng.integers(0, 3, 600), "b": rng.integers(0, 2, 600)}
    r = fl.audit(rng.integers(0, 2, 600), rng.integers(0, 2, 600), sensitive_features=g)
    back = fl.AuditResult.from_json(r.to_json())
    assert back.by_view("a").index.tolist() == [0, 1, 2] and back.excluded == r.excluded


def test_cli_reference(tmp_path, data, capsys):
    path = tmp_path / "d.csv"
    data.to_csv(path, index=False)
    rc = main(
        [
            "audit",
            str(path),
            "--y-true",
            "y",
            "--y-pred",
            "p",
            "--sensitive",
            "race",
            "sex",
            "--reference",
            "race=B",
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "race (reference B, as given):" in out
    assert fl.AuditResult.from_json(tmp_path / "r.json").reference["race"]["group"] == "B"
    rc = main(
        [
            "audit",
            str(path),
            "--y-true",
            "y",
            "--y-pred",
            "p",
            "--sensitive",
            "race",
            "--reference",
            "sex=F",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "--reference: 'sex' is not one of the --sensitive columns" in err
    rc = main(
        [
            "audit",
            str(path),
            "--y-true",
            "y",
            "--y-pred",
            "p",
            "--sensitive",
            "race",
            "--reference",
            "race=Z",
        ]
    )
    assert rc == 1 and "--reference: race='Z' is not a group of the view" in capsys.readouterr().err
