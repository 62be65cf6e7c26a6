"""Boundary campaign, inputs of the Python API: group codes, alignment of pandas inputs, the file reader
(`fairlib.datafiles.read_audit_table`) and the output-path check that `fairlib audit` uses too.

Values are judged against plain pandas on the records (`boundary_harness.oracle_groups`), orderings against the
same audit on rows put back in order, files by reading them.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boundary_harness import Err, Val, oracle_groups, oracle_metrics, same  # noqa: E402

RNG = np.random.default_rng(5)
N = 300
Y = RNG.integers(0, 2, N)
YP = RNG.integers(0, 2, N)
CODES = RNG.choice(["007", "7", "12"], N)


def _fl():
    import fairlib as fl

    return fl


def metrics_agree(y, yp, g, min_support=30):
    "The audit's DI, SPD, EOpp, EOD and PP equal plain pandas' on the same records, every distinct code a group."

    def check(r):
        df = pd.DataFrame({"y": y, "yh": yp, "g": g})
        want = oracle_metrics(oracle_groups(df, "y", "yh", "g"), min_support)
        got = r.metrics
        if "view" in got.columns:
            got = got[got["view"] == got["view"].iloc[0]]
        got = got.set_index("metric").value
        return all(same(got[k], v) for k, v in want.items() if k in got.index)

    return check


def groups_of(r):
    g = r.groups
    if "view" in g.columns:
        g = g[g["view"] == g["view"].iloc[0]]
    return sorted(map(str, g[r.sensitive_features[0]]))


def payload(r):
    "The result's content without its header (what must not depend on row order or index labels)."
    d = r.to_dict()
    return {k: v for k, v in d.items()}


PERM = RNG.permutation(N)


def _order_free(**kw):
    "The same audit on the rows shuffled (and re-indexed): every field equal, bit for bit (the JSON payload)."

    def call():
        fl = _fl()
        a = fl.audit(Y, YP, sensitive_features=CODES, **kw)
        b = fl.audit(Y[PERM], YP[PERM], sensitive_features=CODES[PERM], **kw)
        return a, b

    return call


def _index_free(**kw):
    "Series with other index labels, in another order: aligned by label, the audit is the audit of the arrays."

    def call():
        fl = _fl()
        idx = pd.Index([f"r{i}" for i in range(N)])
        ys = pd.Series(Y, index=idx)
        yps = pd.Series(YP, index=idx).iloc[PERM[::-1]]
        gs = pd.Series(CODES, index=idx).iloc[PERM]
        return fl.audit(Y, YP, sensitive_features=CODES, **kw), fl.audit(
            ys, yps, sensitive_features=gs, **kw
        )

    return call


def _data_index_free():
    def call():
        fl = _fl()
        df = pd.DataFrame({"y": Y, "yh": YP, "g": CODES}, index=np.arange(N) * 7 + 1000)
        return fl.audit("y", "yh", sensitive_features="g", data=df), fl.audit(
            "y", "yh", sensitive_features="g", data=df.iloc[PERM].reset_index(drop=True)
        )

    return call


def both_equal(out):
    a, b = out
    return payload(a) == payload(b)


def _dir():
    return Path(tempfile.mkdtemp())


def read(text, sens="g", name="in.csv", columns=None):
    def call():
        p = _dir() / name
        (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
        return _fl().datafiles.read_audit_table(p, sensitive_features=sens, columns=columns)

    return call


def outputs(make):
    "A call: make(folder) -> (outputs, inputs); then check_output_paths(outputs, inputs)."

    def call():
        d = _dir()
        (d / "in.csv").write_text("y\n1\n")
        outs, ins = make(d)
        return _fl().datafiles.check_output_paths(outs, ins)

    return call


CSV = "y,yhat,g\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(Y, YP, CODES))

CASES = [
    # ---- group codes ------------------------------------------------------------------------------------------------
    (
        "codes-int-and-str",
        lambda: _fl().audit(Y, YP, sensitive_features=np.array([7, "7"] * (N // 2), dtype=object)),
        Err("sensitive_features"),
    ),
    (
        "codes-bool-and-str",
        lambda: _fl().audit(
            Y, YP, sensitive_features=np.array([True, "True"] * (N // 2), dtype=object)
        ),
        Err("sensitive_features"),
    ),
    (
        "codes-float-and-str",
        lambda: _fl().audit(
            Y, YP, sensitive_features=np.array([1.5, "1.5"] * (N // 2), dtype=object)
        ),
        Err("sensitive_features"),
    ),
    (
        "codes-leading-zeros",
        lambda: _fl().audit(Y, YP, sensitive_features=CODES),
        Val(metrics_agree(Y, YP, CODES)),
    ),
    (
        "codes-leading-zeros-groups",
        lambda: _fl().audit(Y, YP, sensitive_features=CODES),
        Val(lambda r: groups_of(r) == ["007", "12", "7"]),
    ),
    (
        "codes-int-and-float-one-group",
        lambda: _fl().audit(Y, YP, sensitive_features=np.array([1, 1.0] * (N // 2), dtype=object)),
        Val(lambda r: len(groups_of(r)) == 1),
    ),
    (
        "codes-intersections-collide",
        lambda: _fl().audit(
            Y,
            YP,
            sensitive_features={"a": np.resize(["x/y", "x"], N), "b": np.resize(["z", "y/z"], N)},
        ),
        Err("sensitive_features"),
    ),
    (
        "codes-missing",
        lambda: _fl().audit(Y, YP, sensitive_features=np.r_[CODES[:-1], None]),
        Err("sensitive_features"),
    ),
    (
        "codes-nan",
        lambda: _fl().audit(Y, YP, sensitive_features=np.r_[np.ones(N - 1), np.nan]),
        Err("sensitive_features"),
    ),
    # ---- alignment and order ---------------------------------------------------------------------------------------
    ("rows-shuffled", _order_free(), Val(both_equal)),
    ("rows-shuffled-vfr", _order_free(vfr=True, n_resamples=40), Val(both_equal)),
    ("index-labels-and-order", _index_free(), Val(both_equal)),
    ("index-labels-and-order-vfr", _index_free(vfr=True, n_resamples=40), Val(both_equal)),
    ("data-index-and-order", _data_index_free(), Val(both_equal)),
    (
        "series-other-labels",
        lambda: _fl().audit(
            pd.Series(Y), pd.Series(YP, index=np.arange(N) + 1), sensitive_features=CODES
        ),
        Err("y_pred"),
    ),
    (
        "series-duplicate-labels",
        lambda: _fl().audit(
            pd.Series(Y, index=[0] * N), pd.Series(YP, index=[1] * N), sensitive_features=CODES
        ),
        Err("y_pred"),
    ),
    (
        "sensitive-series-other-labels",
        lambda: _fl().audit(
            pd.Series(Y), pd.Series(YP), sensitive_features=pd.Series(CODES, index=np.arange(N) + 5)
        ),
        Err("sensitive_features"),
    ),
    (
        "data-duplicate-columns",
        lambda: _fl().audit(
            "y",
            "yh",
            sensitive_features="g",
            data=pd.DataFrame(np.c_[Y, YP, Y], columns=["y", "yh", "y"]).assign(g=CODES),
        ),
        Err("y_true"),
    ),
    (
        "data-column-misspelt",
        lambda: _fl().audit(
            "y", "yh", sensitive_features="grp", data=pd.DataFrame({"y": Y, "yh": YP, "g": CODES})
        ),
        Err("sensitive_features"),
    ),
    # ---- the file reader -------------------------------------------------------------------------------------------
    (
        "read-codes-as-text",
        read(CSV),
        Val(lambda df: sorted(df.g.unique()) == ["007", "12", "7"] and df.y.dtype.kind == "i"),
    ),
    (
        "read-NA-is-a-code",
        read("y,yhat,g\n1,0,NA\n0,1,EU\n1,1,NA\n"),
        Val(lambda df: df.g.tolist() == ["NA", "EU", "NA"]),
    ),
    (
        "read-empty-code-is-missing",
        read("y,yhat,g\n1,0,\n0,1,EU\n"),
        Val(lambda df: df.g.isna().tolist() == [True, False]),
    ),
    ("read-dup-header", read("y,g,g\n1,a,b\n0,b,a\n"), Err("data")),
    ("read-numeric-header", read("1,0,2\n1,0,2\n0,1,3\n", sens="2"), Err("data")),
    ("read-single-record", read("y,yhat,g\n1,0,a\n"), Err("data")),
    ("read-no-record", read("y,yhat,g\n"), Err("data")),
    ("read-missing-column", read(CSV, sens="grp"), Err("sensitive_features")),
    ("read-missing-label-column", read(CSV, columns={"y_true": "label"}), Err("y_true")),
    ("read-label-is-sensitive", read(CSV, columns={"y_true": "g"}), Err("sensitive_features")),
    ("read-unknown-suffix", read(CSV, name="in.json"), Err("data")),
    (
        "read-no-file",
        lambda: _fl().datafiles.read_audit_table(_dir() / "none.csv", sensitive_features="g"),
        Err("data"),
    ),
    (
        "read-folder",
        lambda: _fl().datafiles.read_audit_table(_dir(), sensitive_features="g"),
        Err("data"),
    ),
    (
        "read-sensitive-int",
        lambda: _fl().datafiles.read_audit_table("x.csv", sensitive_features=3),
        Err("sensitive_features"),
    ),
    # ---- output paths ----------------------------------------------------------------------------------------------
    (
        "out-same-as-input",
        outputs(lambda d: ({"json": d / "in.csv"}, {"data": d / "in.csv"})),
        Err("json"),
    ),
    (
        "out-same-as-input-str",
        outputs(lambda d: ({"out": str(d / "in.csv")}, {"data": str(d / "in.csv")})),
        Err("out"),
    ),
    (
        "out-symlink-to-input",
        outputs(
            lambda d: (
                (d / "l.json").symlink_to(d / "in.csv"),
                ({"json": d / "l.json"}, {"data": d / "in.csv"}),
            )[1]
        ),
        Err("json"),
    ),
    (
        "out-hardlink-to-input",
        outputs(
            lambda d: (
                os.link(d / "in.csv", d / "h.html"),
                ({"out": d / "h.html"}, {"data": d / "in.csv"}),
            )[1]
        ),
        Err("out"),
    ),
    (
        "out-two-same",
        outputs(lambda d: ({"out": d / "r", "json": d / "sub" / ".." / "r"}, {})),
        Err("json"),
    ),
    ("out-empty", outputs(lambda d: ({"out": ""}, {})), Err("out")),
    ("out-dash", outputs(lambda d: ({"json": "-"}, {})), Err("json")),
    ("out-folder", outputs(lambda d: ({"json": d}, {})), Err("json")),
    ("out-under-a-file", outputs(lambda d: ({"json": d / "in.csv" / "r.json"}, {})), Err("json")),
    ("out-not-a-path", outputs(lambda d: ({"json": 5}, {})), Err("json")),
    (
        "out-stdin-input",
        outputs(lambda d: ({"json": d / "r.json"}, {"data": "-"})),
        Val(lambda r: set(r) == {"json"}),
    ),
    (
        "out-none-skipped",
        outputs(lambda d: ({"json": None, "out": d / "r.html"}, {"data": d / "in.csv"})),
        Val(lambda r: list(r) == ["out"]),
    ),
    (
        "out-outputs-not-dict",
        lambda: _fl().datafiles.check_output_paths(["r.json"]),
        Err("outputs"),
    ),
]
