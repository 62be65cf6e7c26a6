"""Saved results (issue 24): a pickle-free frame store for the VFR intermediate files (item 4) and results read back
from JSON only when every field is well-formed and every verdict agrees with its value and rule (item 2)."""

import json
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairlib as fl
from fairlib.core import FairlibInputError
from fairlib.results import load_frame, save_frame

ROOT = Path(__file__).resolve().parent.parent


# ---- item 4: save_frame / load_frame ----------------------------------------------------------------------


def _work_like_frame(n=50, seed=0):
    "Every column kind of the VFR work files: categories, ints of several widths, floats with NaN, bools, str with NaN."
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "model": pd.Categorical(rng.choice(["rf", "lr", "xgb"], n)),
            "y_true": rng.integers(0, 2, n).astype(np.int64),
            "y_pred": rng.integers(0, 2, n).astype(np.int8),
            "y_prob": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
            "THCIC_ID": rng.integers(100000, 999999, n),
            "stable": rng.random(n) < 0.5,
            "metric": rng.choice(["DI", "SPD", "EOD"], n),
            "reason": pd.Series(
                np.where(rng.random(n) < 0.5, "too few records", None), dtype="str"
            ),
            "label": [f"mödel {i}" for i in range(n)],  # non-ASCII survives
            "when": pd.date_range("2026-01-01", periods=n, freq="D"),
        }
    )


def test_save_load_round_trip_keeps_values_and_dtypes(tmp_path):
    df = _work_like_frame()
    p = save_frame(tmp_path / "grid.npz", df)
    back = load_frame(p)
    pd.testing.assert_frame_equal(back, df)
    assert back.model.cat.categories.tolist() == df.model.cat.categories.tolist()


def test_round_trip_of_a_non_range_index_and_an_empty_frame(tmp_path):
    df = pd.DataFrame({"v": [1.5, 2.5, np.nan]}, index=pd.Index(["a", "b", "c"], name="cell"))
    pd.testing.assert_frame_equal(load_frame(save_frame(tmp_path / "x.npz", df)), df)
    df2 = pd.DataFrame({"v": [3, 4]}, index=pd.Index([10, 20], name="k"))
    pd.testing.assert_frame_equal(load_frame(save_frame(tmp_path / "y.npz", df2)), df2)
    empty = _work_like_frame().iloc[:0]
    pd.testing.assert_frame_equal(load_frame(save_frame(tmp_path / "e.npz", empty)), empty)


@pytest.mark.parametrize(
    "column",
    [
        [{"a": 1}, None, {"b": 2}],  # the dicts of axis1's `excluded`
        ["x", 1, "y"],  # a mixed column
        [object(), object(), object()],
    ],
)
def test_object_columns_that_are_not_all_strings_are_refused(tmp_path, column):
    df = pd.DataFrame({"ok": [1, 2, 3], "bad": pd.Series(column, dtype=object)})
    with pytest.raises(FairlibInputError, match=r"argument `df`.*save_frame.*`bad`"):
        save_frame(tmp_path / "x.npz", df)
    assert not (tmp_path / "x.npz").exists() and not list(
        tmp_path.iterdir()
    )  # nothing half-written


def test_a_failed_save_leaves_the_previous_file_intact(tmp_path):
    p = save_frame(tmp_path / "x.npz", pd.DataFrame({"v": [1, 2]}))
    before = p.read_bytes()
    with pytest.raises(FairlibInputError):
        save_frame(p, pd.DataFrame({"v": pd.Series([{"a": 1}, None], dtype=object)}))
    assert p.read_bytes() == before and load_frame(p).v.tolist() == [1, 2]


class _Boom:
    "Unpickling this writes a marker file: proof that code ran."

    marker = None

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "pwned"))


def test_a_crafted_pickle_is_never_loaded(tmp_path):
    marker = tmp_path / "marker"
    boom = _Boom()
    boom.marker = str(marker)
    payload = pickle.dumps(boom)
    with pytest.raises(AssertionError):  # the payload is real: plain unpickling runs it
        pickle.loads(payload)
        assert not marker.exists()
    marker.unlink()
    # a pickle under the store's file name
    (tmp_path / "pred.npz").write_bytes(payload)
    with pytest.raises(FairlibInputError, match=r"argument `path`.*load_frame"):
        load_frame(tmp_path / "pred.npz")
    assert not marker.exists()
    # the same payload as an object array inside a genuine npz (np.savez pickles object arrays)
    np.savez(
        tmp_path / "inner.npz",
        c0=np.array([boom], dtype=object),
        __meta__=np.frombuffer(b"{}", np.uint8),
    )
    with pytest.raises(FairlibInputError, match=r"argument `path`.*load_frame"):
        load_frame(tmp_path / "inner.npz")
    assert not marker.exists()
    # and pandas' own pickle of a frame
    pd.DataFrame({"v": [1]}).to_pickle(tmp_path / "frame.npz")
    with pytest.raises(FairlibInputError, match="load_frame"):
        load_frame(tmp_path / "frame.npz")


def test_load_frame_refuses_a_missing_or_foreign_file(tmp_path):
    with pytest.raises(FairlibInputError, match=r"argument `path`.*load_frame"):
        load_frame(tmp_path / "none.npz")
    np.savez(tmp_path / "plain.npz", a=np.arange(3))
    with pytest.raises(FairlibInputError, match=r"argument `path`.*load_frame"):
        load_frame(tmp_path / "plain.npz")


def test_save_frame_refuses_what_it_cannot_store(tmp_path):
    with pytest.raises(FairlibInputError, match=r"argument `df`.*save_frame"):
        save_frame(tmp_path / "x.npz", {"v": [1]})
    with pytest.raises(FairlibInputError, match=r"argument `df`.*save_frame"):
        save_frame(tmp_path / "x.npz", pd.DataFrame({0: [1], "a": [2]}))  # a non-str column name
    with pytest.raises(FairlibInputError, match=r"argument `df`.*save_frame"):
        save_frame(tmp_path / "x.npz", pd.DataFrame([[1, 2]], columns=["a", "a"]))


def test_vfr_paper_notebooks_no_longer_pickle():
    for nb in sorted((ROOT / "nbs" / "papers" / "vfr").glob("*.ipynb")):
        src = "\n".join(
            "".join(c["source"])
            for c in json.loads(nb.read_text())["cells"]
            if c["cell_type"] == "code"
        )
        assert not re.search(r"read_pickle|to_pickle|pickle\.load|\.pkl\b", src), nb.name


# ---- item 2: from_json validates what it loads ----------------------------------------------------------------


def _audit_json():
    rng = np.random.default_rng(3)
    n = 600
    y, yh = rng.integers(0, 2, n), rng.integers(0, 2, n)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.45, 0.05])  # c is excluded below min_support
    return json.loads(fl.audit(y, yh, sensitive_features=g).to_json())


def _load(d):
    return fl.AuditResult.from_json(json.dumps(d))


def _rows(d, field):
    fr = d[field]["__frame__"]
    return fr["columns"], fr["data"]


def test_a_clean_audit_still_round_trips():
    d = _audit_json()
    back = _load(d)
    assert back.n == d["n"] and set(back.verdicts.values()) <= {"Pass", "Fail", "Undefined"}


def test_a_flipped_verdict_is_refused():
    d = _audit_json()
    cols, rows = _rows(d, "metrics")
    i = cols.index("verdict")
    rows[0][i] = {"Pass": "Fail", "Fail": "Pass"}.get(rows[0][i], "Pass")
    with pytest.raises(
        FairlibInputError,
        match=r"`metrics`.*verdict.*AuditResult\.from_json|AuditResult\.from_json.*`metrics`.*verdict",
    ):
        _load(d)


def test_verdict_is_recomputed_from_value_and_rule_independently():
    "An oracle written here: |x| <= t or x >= t on the stored value; every row of a real audit agrees with it."
    d = _audit_json()
    cols, rows = _rows(d, "metrics")
    for r in rows:
        row = dict(zip(cols, r))
        absx, op, t = re.fullmatch(r"(\|x\||x) (>=|<=) (\S+)", row["rule"]).groups()
        v = row["value"]
        want = (
            "Undefined"
            if v is None
            else (
                "Pass"
                if (
                    (abs(v) if absx == "|x|" else v) >= float(t)
                    if op == ">="
                    else (abs(v) if absx == "|x|" else v) <= float(t)
                )
                else "Fail"
            )
        )
        assert row["verdict"] == want
    # moving a value across its threshold (verdict left as it was) must be refused
    k = cols.index("value")
    for r in rows:
        if r[k] is not None and dict(zip(cols, r))["metric"] == "SPD":
            r[k] = 0.95 if dict(zip(cols, r))["verdict"] == "Pass" else 0.0
    with pytest.raises(FairlibInputError, match="verdict"):
        _load(d)


def test_a_value_that_is_not_a_number_is_refused():
    d = _audit_json()
    cols, rows = _rows(d, "metrics")
    rows[1][cols.index("value")] = "abc"
    with pytest.raises(FairlibInputError, match=r"`metrics`.*`value`.*'abc'"):
        _load(d)


@pytest.mark.parametrize(
    "field, bad", [("n", -5), ("n", 2.5), ("n", "600"), ("n", True), ("min_support", -1)]
)
def test_counts_must_be_non_negative_ints(field, bad):
    d = _audit_json()
    d[field] = bad
    with pytest.raises(FairlibInputError, match=rf"field `{field}`"):
        _load(d)


@pytest.mark.parametrize("bad", ["no", "yes", 0, 1, "False"])
def test_included_must_be_a_json_boolean(bad):
    "`included = 'no'` was read as True (a non-empty string), quietly putting an excluded group back."
    d = _audit_json()
    cols, rows = _rows(d, "groups")
    rows[-1][cols.index("included")] = bad
    with pytest.raises(FairlibInputError, match=r"`groups`.*`included`"):
        _load(d)


@pytest.mark.parametrize(
    "column, bad", [("support", -3), ("selection_rate", 1.7), ("TPR", -0.1), ("support", "many")]
)
def test_group_counts_and_rates_must_be_in_range(column, bad):
    d = _audit_json()
    cols, rows = _rows(d, "groups")
    rows[0][cols.index(column)] = bad
    with pytest.raises(FairlibInputError, match=rf"`groups`.*`{column}`"):
        _load(d)


@pytest.mark.parametrize(
    "field, bad",
    [
        ("calibration", 3),
        ("sensitive_features", "group"),
        ("excluded", [1]),
        ("metrics", [1, 2]),
        ("overall", "x"),
    ],
)
def test_fields_of_the_wrong_kind_are_refused(field, bad):
    d = _audit_json()
    d[field] = bad
    with pytest.raises(FairlibInputError, match=rf"field `{field}`"):
        _load(d)


def test_a_missing_required_field_is_named():
    d = _audit_json()
    del d["n"]
    with pytest.raises(FairlibInputError, match=r"field `n`.*missing"):
        _load(d)


def test_other_results_are_checked_too():
    from fairlib.stats import McNemarResult, mcnemar_exact

    d = json.loads(mcnemar_exact(30, 12).to_json())
    assert McNemarResult.from_json(json.dumps(d)).p_value == pytest.approx(d["p_value"])
    for field, bad in (("b", -1), ("defined", "yes"), ("p_value", "0.01")):
        with pytest.raises(FairlibInputError, match=rf"McNemarResult\.from_json.*field `{field}`"):
            McNemarResult.from_json(json.dumps(d | {field: bad}))


def test_a_threshold_beyond_the_rules_six_figures_is_not_refused():
    "The rule text rounds the threshold to 6 significant figures; the check decides with the stored threshold."
    rng = np.random.default_rng(0)
    y, yh, g = rng.integers(0, 2, 800), rng.integers(0, 2, 800), rng.choice(["a", "b"], 800)
    di = fl.audit(y, yh, sensitive_features=g).value("DI")
    r = fl.audit(y, yh, sensitive_features=g, thresholds={"DI": di + 1e-9})
    assert r.verdicts["DI"] == "Fail"
    assert fl.AuditResult.from_json(r.to_json()).verdicts["DI"] == "Fail"


def test_single_verdict_fields_are_recomputed_on_load():
    "FourFifthsVerdict.passed and VFRResult.dominant_verdict / vfr must agree with the numbers they come from."
    import json

    import numpy as np

    import fairlib as fl

    rng = np.random.default_rng(5)
    y, yp, g = rng.integers(0, 2, 400), rng.integers(0, 2, 400), rng.choice(["a", "b"], 400)
    v = fl.four_fifths_rule(y, yp, sensitive_features=g)
    assert type(v).from_json(v.to_json()).passed == v.passed
    d = json.loads(v.to_json())
    d["passed"] = not d["passed"]
    with pytest.raises(FairlibInputError, match="`passed`"):
        type(v).from_json(json.dumps(d))
    r = fl.verdict_flip_rate(y, yp, sensitive_features=g, metric="SPD", n_resamples=40, seed=0)
    assert type(r).from_json(r.to_json()).vfr == r.vfr
    d = json.loads(r.to_json())
    d["dominant_verdict"] = "Fail" if d["dominant_verdict"] == "Pass" else "Pass"
    with pytest.raises(FairlibInputError, match="`dominant_verdict`"):
        type(r).from_json(json.dumps(d))
    d = json.loads(r.to_json())
    d["vfr"] = 0.0 if r.vfr > 0 else 0.25
    with pytest.raises(FairlibInputError, match="`vfr`"):
        type(r).from_json(json.dumps(d))
