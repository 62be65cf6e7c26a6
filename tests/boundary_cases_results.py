"""Boundary campaign, saved results: JSON round trips bit for bit, edited files, what `from_json` is handed, and the
HTML report of a result.

A round trip is judged field by field against the result that was saved (floats compared bit for bit, NaN where
NaN) and by writing the JSON again; an edited file must be refused naming the field that was edited (by the checks
of its values, or by the content hash when every value still agrees); the report is judged by reading the file.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boundary_harness import Err, Val, stability_oracle  # noqa: E402

RNG = np.random.default_rng(3)
N = 600
Y, YH = RNG.integers(0, 2, N), RNG.integers(0, 2, N)
G = RNG.choice(["a", "b", "c"], N, p=[0.5, 0.45, 0.05])
SEX = RNG.choice(["F", "M"], N)
PROB = np.clip(YH * 0.5 + RNG.random(N) * 0.5, 0, 1)


@functools.lru_cache(maxsize=None)
def base(kind="vfr"):
    "The saved audits the edits start from (computed once)."
    import fairlib as fl

    kw = dict(sensitive_features=G, min_support=40)
    if kind == "vfr":
        return fl.audit(Y, YH, **kw, vfr=True, n_resamples=40)
    if kind == "plain":
        return fl.audit(Y, YH, **kw)
    if kind == "prob":
        return fl.audit(Y, YH, **kw, y_prob=PROB, vfr=True, n_resamples=40)
    if kind == "inter":
        return fl.audit(Y, YH, sensitive_features={"g": G, "sex": SEX}, min_support=20)
    if kind == "text":
        lab = np.where(Y == 1, "yes", "no")
        return fl.audit(lab, np.where(YH == 1, "yes", "no"), **kw, pos_label="yes")
    if kind == "weighted":
        return fl.audit(Y, YH, **kw, sample_weight=np.linspace(0.5, 2.0, N))
    if kind == "one-group":
        return fl.audit(Y, YH, sensitive_features=np.repeat("a", N), vfr=True, n_resamples=40)
    if kind == "thresholds":
        return fl.audit(Y, YH, **kw, thresholds={"DI": 0.95, "SPD": 0.01})
    if kind == "plan":
        return fl.audit(
            Y[:300], YH[:300], sensitive_features=G[:300], size_plan=True, n_resamples=40
        )
    if kind == "ff":
        return fl.four_fifths_rule(Y, YH, **kw)
    if kind == "vfrcell":
        return fl.verdict_flip_rate(
            Y, YH, sensitive_features=G, metric="PP", n_resamples=60, min_support=40
        )
    if kind == "vfrcell-inf":  # every resample the same value: margin inf
        return fl.verdict_flip_rate(
            Y,
            np.r_[np.ones(N // 2, int), np.zeros(N - N // 2, int)],
            sensitive_features=np.repeat(["a", "b"], N // 2),
            metric="SPD",
            n_resamples=40,
        )
    if kind == "vfrcell-starved":
        return fl.verdict_flip_rate(
            Y, YH, sensitive_features=G, metric="SPD", n_resamples=40, resample_size=3
        )
    if kind == "mcnemar":
        from fairlib.stats import mcnemar_exact

        return mcnemar_exact(30, 12)
    raise KeyError(kind)


def _bits(x) -> bytes:
    return struct.pack("<d", float(x))


def same_value(a, b) -> bool:
    "Equal to the last bit: floats by their bytes (NaN by NaN), frames cell by cell, containers element by element."
    if isinstance(a, pd.DataFrame) or isinstance(b, pd.DataFrame):
        if not (isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame)) or list(
            a.columns
        ) != list(b.columns):
            return False
        return len(a) == len(b) and all(
            same_value(x, y) for c in a.columns for x, y in zip(a[c].tolist(), b[c].tolist())
        )
    if isinstance(a, pd.Series):
        return same_value(a.to_dict(), b.to_dict() if isinstance(b, pd.Series) else b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return same_value(list(np.asarray(a).tolist()), list(np.asarray(b).tolist()))
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and set(map(str, a)) == set(map(str, b))
            and all(same_value(v, b[k] if k in b else b[str(k)]) for k, v in a.items())
        )
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(same_value(x, y) for x, y in zip(a, b))
        )
    missing = lambda v: v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))  # noqa: E731
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    if isinstance(a, (float, np.floating)) and not isinstance(a, bool):
        return isinstance(b, (int, float, np.number)) and _bits(a) == _bits(b)
    return a == b


def round_trip(kind):
    "Val: the result read back equals the saved one in every field, bit for bit, and writes the same JSON again."

    def call():
        r = base(kind)
        s = r.to_json()
        return r, s, type(r).from_json(s)

    def check(out):
        r, s, back = out
        fields = [f.name for f in dataclasses.fields(r)]
        return back.to_json() == s and all(
            same_value(getattr(r, f), getattr(back, f)) for f in fields
        )

    return call, Val(check)


def _doc(kind="vfr"):
    return json.loads(base(kind).to_json())


def edited(mutate, kind="vfr"):
    "A call: the saved result of `kind` with `mutate(d)` applied to its JSON, read back with from_json."

    def call():
        d = _doc(kind)
        mutate(d)
        return type(base(kind)).from_json(json.dumps(d))

    return call


def _rows(d, table):
    fr = d[table]["__frame__"]
    return fr["columns"], fr["data"]


def setcell(table, column, value, row=0, where=None):
    "An edit: one cell of a stored table (the first row, or the first whose `where` column has the given value)."

    def mutate(d):
        cols, data = _rows(d, table)
        i = row
        if where is not None:
            k, v = where
            i = next(j for j, r in enumerate(data) if r[cols.index(k)] == v)
        data[i][cols.index(column)] = (
            value(data[i][cols.index(column)]) if callable(value) else value
        )

    return mutate


def setfield(name, value):
    def mutate(d):
        d[name] = value(d[name]) if callable(value) else value

    return mutate


def header(key, value):
    def mutate(d):
        if value is _DROP:
            d["__fairlib__"].pop(key, None)
        else:
            d["__fairlib__"][key] = value(d["__fairlib__"][key]) if callable(value) else value

    return mutate


_DROP = object()


def _both(*mutations):
    def mutate(d):
        for m in mutations:
            m(d)

    return mutate


def _flip(v):
    return {"Pass": "Fail", "Fail": "Pass"}.get(v, "Pass")


def _dup_first_row(table):
    def mutate(d):
        _, data = _rows(d, table)
        data.append(list(data[0]))
        d[table]["__frame__"]["index"].append(len(data) - 1)

    return mutate


def _drop_row(table, i=-1):
    def mutate(d):
        _, data = _rows(d, table)
        del data[i]
        d[table]["__frame__"]["index"].pop()

    return mutate


def _rename_group_everywhere(d):
    "A consistent edit: group 'a' called 'z' in every table (only the content hash can tell)."
    text = json.dumps({k: v for k, v in d.items() if k != "__fairlib__"})
    new = json.loads(text.replace('"a"', '"z"'))
    d.update(new)


def _threshold_rule_verdict(d):
    "A consistent edit: DI's threshold moved to 0.99 with its rule and verdict (only the hash can tell)."
    cols, data = _rows(d, "metrics")
    for r in data:
        if r[cols.index("metric")] == "DI":
            r[cols.index("threshold")] = 0.99
            r[cols.index("rule")] = "x >= 0.99"
            x = r[cols.index("value")]
            r[cols.index("verdict")] = "Pass" if x >= 0.99 else "Fail"


def _stability_flip(v):
    return {
        "Stable": "Unstable",
        "Unstable": "Stable",
        "Undetermined": "Stable",
        "Undefined": "Stable",
    }[v]


def _load(s):
    import fairlib as fl

    return lambda: fl.AuditResult.from_json(s)


def _tmpfile(text, suffix=".json"):
    "A call that writes `text` to a new file and reads it with from_json (text may be a callable giving it)."

    def call():
        import fairlib as fl

        d = Path(tempfile.mkdtemp())
        p = d / f"r{suffix}"
        content = text() if callable(text) else text
        (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
        return fl.AuditResult.from_json(p)

    return call


def _folder():
    import fairlib as fl

    return fl.AuditResult.from_json(tempfile.mkdtemp())


def _path_obj_missing():
    import fairlib as fl

    return fl.AuditResult.from_json(Path(tempfile.mkdtemp()) / "none.json")


def _from_bytes():
    import fairlib as fl

    return fl.AuditResult.from_json(base("vfr").to_json().encode())


def _report(kind, **kw):
    "A call: the HTML report of `kind`, written to a file, and the result: (html text, result)."

    def call():
        r = base(kind)
        p = Path(tempfile.mkdtemp()) / "r.html"
        r.to_html(p, **kw)
        return p.read_text(encoding="utf-8"), r

    return call


def _report_agrees(out):
    "Standalone; every metric named; every verdict word of the result present; stability words only where due."
    html, r = out
    m = r.metrics
    if not (
        html.lstrip().lower().startswith("<!doctype html")
        and "</html>" in html
        and "<script src" not in html
    ):
        return False
    if not all(x in html for x in set(m.metric)) or not all(v in html for v in set(m.verdict)):
        return False
    if "vfr_stability" in m.columns:
        K = r.vfr_settings["n_resamples"]
        for row in m.itertuples():
            nu = 0 if pd.isna(row.vfr_n_undefined) else int(row.vfr_n_undefined)
            want = stability_oracle(row.vfr, K - nu, not pd.isna(row.value) and nu <= 0.05 * K)
            if row.vfr_stability != want or want not in html:
                return False
        if set(m.vfr_stability) <= {"Undefined", "Undetermined"} and ">Stable<" in html.replace(
            "</span>", "<"
        ):
            return False
    return True


def _vfr_doc_edit(**changes):
    def mutate(d):
        d.update(changes)

    return mutate


CASES = [
    # ---- round trips, bit for bit -----------------------------------------------------------------------------------
    *[
        (f"round-trip-{k}", *round_trip(k))
        for k in (
            "vfr",
            "plain",
            "prob",
            "inter",
            "text",
            "weighted",
            "one-group",
            "thresholds",
            "plan",
            "ff",
            "vfrcell",
            "vfrcell-inf",
            "vfrcell-starved",
            "mcnemar",
        )
    ],
    # ---- the per-group table ---------------------------------------------------------------------------------------
    (
        "edit-support-plus-1",
        edited(setcell("groups", "support", lambda v: v + 1)),
        Err("groups", "n"),
    ),
    ("edit-support-float", edited(setcell("groups", "support", 296.5)), Err("groups", "support")),
    ("edit-support-negative", edited(setcell("groups", "support", -1)), Err("groups", "support")),
    ("edit-n-column", edited(setcell("groups", "n", lambda v: v + 3)), Err("groups")),
    ("edit-positives", edited(setcell("groups", "positives", lambda v: v - 1)), Err("groups")),
    (
        "edit-predicted-positives",
        edited(setcell("groups", "predicted_positives", lambda v: v + 1)),
        Err("groups"),
    ),
    ("edit-TPR", edited(setcell("groups", "TPR", lambda v: v + 0.01)), Err("groups", "TPR")),
    ("edit-FPR", edited(setcell("groups", "FPR", lambda v: v / 2)), Err("groups", "FPR")),
    (
        "edit-selection-rate",
        edited(setcell("groups", "selection_rate", 0.99)),
        Err("groups", "selection_rate"),
    ),
    ("edit-PPV", edited(setcell("groups", "PPV", 0.5)), Err("groups", "PPV")),
    (
        "edit-accuracy",
        edited(setcell("groups", "accuracy", lambda v: 1 - v)),
        Err("groups", "accuracy"),
    ),
    ("edit-rate-above-1", edited(setcell("groups", "TNR", 1.2)), Err("groups", "TNR")),
    (
        "edit-included-flipped",
        edited(setcell("groups", "included", lambda v: not v)),
        Err("groups", "included"),
    ),
    (
        "edit-included-string",
        edited(setcell("groups", "included", "true")),
        Err("groups", "included"),
    ),
    (
        "edit-group-renamed-in-table",
        edited(setcell("groups", "group", "z")),
        Err("groups", "excluded", "disparity_table"),
    ),
    ("edit-group-row-duplicated", edited(_dup_first_row("groups")), Err("groups")),
    ("edit-group-row-removed", edited(_drop_row("groups")), Err("groups", "excluded", "n")),
    (
        "edit-group-renamed-everywhere",
        edited(_rename_group_everywhere),
        Err("metrics", "groups", "__fairlib__"),
    ),
    # ---- the per-metric table --------------------------------------------------------------------------------------
    (
        "edit-value-same-verdict",
        edited(setcell("metrics", "value", lambda v: v * 0.999)),
        Err("metrics", "value"),
    ),
    (
        "edit-value-and-verdict",
        edited(_both(setcell("metrics", "value", 0.5), setcell("metrics", "verdict", "Fail"))),
        Err("metrics", "value"),
    ),
    (
        "edit-verdict-flipped",
        edited(setcell("metrics", "verdict", _flip)),
        Err("metrics", "verdict"),
    ),
    (
        "edit-verdict-unknown",
        edited(setcell("metrics", "verdict", "Maybe")),
        Err("metrics", "verdict"),
    ),
    (
        "edit-threshold-only",
        edited(setcell("metrics", "threshold", 0.7)),
        Err("metrics", "threshold"),
    ),
    ("edit-threshold-rule-verdict", edited(_threshold_rule_verdict), Err("metrics")),
    ("edit-rule-abs", edited(setcell("metrics", "rule", "|x| >= 0.8")), Err("metrics", "rule")),
    ("edit-rule-garbage", edited(setcell("metrics", "rule", "whatever")), Err("metrics", "rule")),
    ("edit-metric-renamed", edited(setcell("metrics", "metric", "SPD")), Err("metrics")),
    ("edit-metric-row-duplicated", edited(_dup_first_row("metrics")), Err("metrics")),
    ("edit-value-string", edited(setcell("metrics", "value", "0.97")), Err("metrics", "value")),
    (
        "edit-value-nan-no-reason",
        edited(setcell("metrics", "value", None)),
        Err("metrics", "value", "verdict"),
    ),
    (
        "edit-reason-dropped",
        edited(setcell("metrics", "reason", None), "one-group"),
        Err("metrics", "reason"),
    ),
    ("edit-vfr-0.6", edited(setcell("metrics", "vfr", 0.6)), Err("metrics", "vfr")),
    ("edit-vfr-1", edited(setcell("metrics", "vfr", 1.0)), Err("metrics", "vfr")),
    ("edit-vfr-negative", edited(setcell("metrics", "vfr", -0.1)), Err("metrics", "vfr")),
    ("edit-vfr-not-whole-flips", edited(setcell("metrics", "vfr", 0.0123)), Err("metrics", "vfr")),
    (
        "edit-vfr-null-with-value",
        edited(setcell("metrics", "vfr", None)),
        Err("metrics", "vfr", "dominant_verdict"),
    ),
    (
        "edit-vfr-n-undefined-above-K",
        edited(setcell("metrics", "vfr_n_undefined", 41)),
        Err("metrics", "vfr_n_undefined"),
    ),
    (
        "edit-vfr-n-undefined-negative",
        edited(setcell("metrics", "vfr_n_undefined", -1)),
        Err("metrics", "vfr_n_undefined"),
    ),
    (
        "edit-stability-flipped",
        edited(setcell("metrics", "vfr_stability", _stability_flip)),
        Err("metrics", "vfr_stability"),
    ),
    (
        "edit-stability-unknown",
        edited(setcell("metrics", "vfr_stability", "Very stable")),
        Err("metrics", "vfr_stability"),
    ),
    (
        "edit-stability-of-undefined",
        edited(setcell("metrics", "vfr_stability", "Stable"), "one-group"),
        Err("metrics", "vfr_stability"),
    ),
    (
        "edit-interval-reversed",
        edited(setcell("metrics", "value_ci_low", 5.0)),
        Err("metrics", "value_ci_low"),
    ),
    (
        "edit-vfr-settings-K",
        edited(setfield("vfr_settings", lambda v: v | {"n_resamples": 41})),
        Err("metrics", "vfr_settings"),
    ),
    (
        "edit-vfr-settings-dropped",
        edited(setfield("vfr_settings", None)),
        Err("vfr_settings", "metrics"),
    ),
    (
        "edit-vfr-settings-K-string",
        edited(setfield("vfr_settings", lambda v: v | {"n_resamples": "40"})),
        Err("vfr_settings"),
    ),
    # ---- the other fields ------------------------------------------------------------------------------------------
    ("edit-excluded-emptied", edited(setfield("excluded", {})), Err("excluded")),
    (
        "edit-excluded-size",
        edited(setfield("excluded", lambda v: {k: s + 1 for k, s in v.items()})),
        Err("excluded"),
    ),
    ("edit-excluded-extra", edited(setfield("excluded", lambda v: v | {"q": 5})), Err("excluded")),
    (
        "edit-excluded-string-size",
        edited(setfield("excluded", lambda v: {k: "many" for k in v})),
        Err("excluded"),
    ),
    ("edit-n", edited(setfield("n", N + 1)), Err("n", "groups")),
    ("edit-n-negative", edited(setfield("n", -5)), Err("n")),
    ("edit-n-bool", edited(setfield("n", True)), Err("n")),
    (
        "edit-min-support",
        edited(setfield("min_support", 20)),
        Err("min_support", "groups", "included"),
    ),
    (
        "edit-sensitive-renamed",
        edited(setfield("sensitive_features", ["race"])),
        Err("sensitive_features", "groups", "views"),
    ),
    ("edit-overall-TPR", edited(setfield("overall", lambda v: v | {"TPR": 0.9})), Err("overall")),
    ("edit-overall-n", edited(setfield("overall", lambda v: v | {"n": 1.0})), Err("overall")),
    ("edit-pos-label", edited(setfield("pos_label", 0)), Err("pos_label")),
    ("edit-calibration", edited(setfield("calibration", "worst_group_mce")), Err("calibration")),
    ("edit-extra-field", edited(setfield("approved_by", "board")), Err("approved_by")),
    ("edit-field-missing", edited(lambda d: d.pop("n")), Err("n")),
    ("edit-result-name", edited(setfield("__result__", "VFRResult")), Err("s", "VFRResult")),
    # ---- the header ------------------------------------------------------------------------------------------------
    ("header-removed", edited(lambda d: d.pop("__fairlib__")), Err("s", "__fairlib__")),
    ("header-schema-1", edited(header("schema", 1)), Err("__fairlib__.schema")),
    ("header-schema-newer", edited(header("schema", 3)), Err("__fairlib__.schema")),
    ("header-schema-string", edited(header("schema", "2")), Err("__fairlib__.schema")),
    ("header-form-unknown", edited(header("form", "partial")), Err("__fairlib__.form")),
    ("header-form-missing", edited(header("form", _DROP)), Err("__fairlib__.form")),
    ("header-format-foreign", edited(header("format", "other-tool")), Err("__fairlib__.format")),
    (
        "header-sha-altered",
        edited(header("sha256", lambda h: ("0" if h[0] != "0" else "1") + h[1:])),
        Err("__fairlib__"),
    ),
    ("header-sha-not-hex", edited(header("sha256", "xyz")), Err("__fairlib__.sha256")),
    (
        "header-field-sha-altered",
        edited(header("fields_sha256", lambda f: f | {"n": "0" * 64})),
        Err("n"),
    ),
    ("header-result-other", edited(header("result", "VFRResult")), Err("s", "VFRResult")),
    ("header-not-an-object", edited(setfield("__fairlib__", "v2")), Err("__fairlib__")),
    # ---- single results --------------------------------------------------------------------------------------------
    ("ff-passed-flipped", edited(setfield("passed", lambda v: not v), "ff"), Err("passed")),
    ("ff-ratio-edited", edited(setfield("ratio", 0.1), "ff"), Err("passed", "ratio")),
    (
        "vfr-cell-dominant-flipped",
        edited(setfield("dominant_verdict", _flip), "vfrcell"),
        Err("dominant_verdict"),
    ),
    (
        "vfr-cell-n-pass",
        edited(setfield("n_pass", lambda v: v + 1), "vfrcell"),
        Err("n_pass", "vfr"),
    ),
    ("vfr-cell-vfr", edited(setfield("vfr", 0.45), "vfrcell"), Err("vfr")),
    (
        "vfr-cell-n-undefined-above-K",
        edited(setfield("n_undefined", 61), "vfrcell"),
        Err("n_undefined"),
    ),
    (
        "vfr-cell-values-edited",
        edited(setfield("metric_values", lambda v: v[:-1] + [1.0]), "vfrcell"),
        Err("n_pass", "metric_values"),
    ),
    (
        "vfr-cell-auditable-starved",
        edited(setfield("auditable", True), "vfrcell-starved"),
        Err("auditable"),
    ),
    (
        "vfr-cell-margin-inf-string",
        edited(setfield("stability_margin", "inf"), "vfrcell-inf"),
        Err("stability_margin"),
    ),
    # ---- what from_json is handed ----------------------------------------------------------------------------------
    ("source-plain-words", _load("hello"), Err("s")),
    ("source-missing-path", _load("no/such/result.json"), Err("s")),
    ("source-missing-Path", _path_obj_missing, Err("s")),
    ("source-folder", _folder, Err("s")),
    ("source-csv-file", _tmpfile("y,yhat,g\n1,0,a\n", ".csv"), Err("s")),
    ("source-empty-string", _load(""), Err("s")),
    ("source-json-list", _load("[1, 2, 3]"), Err("s")),
    ("source-json-number", _load("5"), Err("s")),
    ("source-json-null", _load("null"), Err("s")),
    ("source-nan-literal", _load('{"__fairlib__": {}, "n": NaN}'), Err("s")),
    ("source-truncated", lambda: _load(base("vfr").to_json()[:-40])(), Err("s")),
    ("source-bytes-ok", _from_bytes, Val(lambda r: r.n == N)),
    ("source-bytes-not-utf8", _load(b"\xff\xfe\x00{"), Err("s")),
    ("source-none", _load(None), Err("s")),
    ("source-int", _load(42), Err("s")),
    ("source-deep-nesting", _load("[" * 100000 + "]" * 100000), Err("s")),
    ("source-file-ok", _tmpfile(lambda: base("vfr").to_json()), Val(lambda r: r.n == N)),
    ("source-file-binary", _tmpfile(bytes(range(256))), Err("s")),
    # ---- the HTML report of a result -------------------------------------------------------------------------------
    ("html-vfr", _report("vfr"), Val(_report_agrees)),
    ("html-plain", _report("plain"), Val(_report_agrees)),
    ("html-one-group-never-stable", _report("one-group"), Val(_report_agrees)),
    ("html-intersections", _report("inter"), Val(_report_agrees)),
    ("html-read-back", lambda: _html_of_read_back(), Val(_report_agrees)),
]


def _html_of_read_back():
    "The report of a result read back from its JSON equals, as a check, the report of the result itself."
    import fairlib as fl

    r = fl.AuditResult.from_json(base("vfr").to_json())
    p = Path(tempfile.mkdtemp()) / "r.html"
    r.to_html(p)
    return p.read_text(encoding="utf-8"), r
