"""Side by side: fairlib's error-rate parities and reference-group disparities against Aequitas's Group / Bias tables,
and fairlib's difference() / ratio() and custom metrics against fairlearn's MetricFrame, on UCI Adult and COMPAS.

    python benchmarks/compare_aequitas_fairlearn.py [--aequitas-python /tmp/aeq/bin/python] [--write-fixture PATH]

Aequitas needs pandas<3, which the project's environment does not have, so it runs in its own interpreter
(`python -m venv /tmp/aeq && /tmp/aeq/bin/pip install aequitas`; `--aequitas-python` names it): this script writes each
data set's records (score, label_value and the attributes) to a temporary CSV, runs Aequitas's `Group().get_crosstabs`
and `Bias().get_disparity_major_group` / `get_disparity_predefined_groups` there, and reads its tables back as JSON.
fairlearn runs here. Every compared quantity is printed with the largest absolute difference; the script exits 1 when
one exceeds 1e-12. `--write-fixture` stores Aequitas's numbers (rates and disparities, no counts) as the oracle of
tests/test_disparities_oracles.py, which checks fairlib against them without Aequitas installed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import fairlib as fl
from fairlib.handbook import load_adult, load_compas

TOL = 1e-12
ATTRS = ("race", "sex")
# Aequitas's name -> fairlib's rate name (the per-group table and the disparities)
RATES = {
    "tpr": "TPR",
    "tnr": "TNR",
    "for": "FOR",
    "fdr": "FDR",
    "fpr": "FPR",
    "fnr": "FNR",
    "npv": "NPV",
    "precision": "PPV",
    "pprev": "selection_rate",
    "prev": "base_rate",
    "accuracy": "accuracy",
}
DISPARITIES = ("pprev", "precision", "fdr", "for", "fpr", "fnr", "tpr", "tnr", "npv")
PARITY = {
    "FNRP": "fnr",
    "FORP": "for",
    "FDRP": "fdr",
    "DI": "pprev",
}  # min / max of one Aequitas group rate

AEQUITAS = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import pandas as pd
from aequitas.group import Group
from aequitas.bias import Bias
df = pd.read_csv(sys.argv[1], dtype=str)
df["score"] = df["score"].astype(int)
df["label_value"] = df["label_value"].astype(int)
ref = json.loads(sys.argv[2])
xtab, _ = Group().get_crosstabs(df)
out = {"group": xtab.drop(columns=["model_id"]).to_dict("records")}
b = Bias()
major = b.get_disparity_major_group(xtab, original_df=df, alpha=0.05, check_significance=False)
out["major"] = major.to_dict("records")
out["given"] = b.get_disparity_predefined_groups(
    xtab, original_df=df, ref_groups_dict=ref, alpha=0.05, check_significance=False
).to_dict("records")
import aequitas
out["version"] = getattr(aequitas, "__version__", "?")
print(json.dumps(out, default=str))
"""


def datasets() -> dict:
    "name -> (records with y, y_pred and the attributes as text, the chosen reference groups)."
    adult = load_adult()
    a = pd.DataFrame(
        {
            "y": adult.high_income.astype(int),
            "y_pred": (adult.education_num >= 13).astype(
                int
            ),  # a fixed rule: degree-level education
            "race": adult.race.astype(str),
            "sex": adult.sex.astype(str),
        }
    )
    compas = load_compas()
    c = pd.DataFrame(
        {
            "y": compas.two_year_recid.astype(int),
            "y_pred": compas.high_risk.astype(int),
            "race": compas.race.astype(str),
            "sex": compas.sex.astype(str),
        }
    )
    return {
        "UCI Adult": (a, {"race": "White", "sex": "Male"}),
        "COMPAS": (c, {"race": "Caucasian", "sex": "Male"}),
    }


def run_aequitas(python: str, df: pd.DataFrame, ref: dict) -> dict:
    "Aequitas's group table and both disparity tables for the records `df`, run in the interpreter `python`."
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.csv"
        df.rename(columns={"y_pred": "score", "y": "label_value"})[
            ["score", "label_value", *ATTRS]
        ].to_csv(path, index=False)
        done = subprocess.run(
            [python, "-c", AEQUITAS, str(path), json.dumps(ref)],
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(done.stdout)


def aequitas_oracle(aeq: dict) -> dict:
    "The oracle numbers kept from Aequitas's tables: per (attribute, group) its rates and both sets of disparities."
    keep = {}
    for kind in ("group", "major", "given"):
        rows = []
        for r in aeq[kind]:
            row = {"attribute": r["attribute_name"], "group": str(r["attribute_value"])}
            if kind == "group":
                row |= {k: r[k] for k in RATES}
            else:
                row |= {f"{d}_disparity": r[f"{d}_disparity"] for d in DISPARITIES}
                row["reference"] = str(r["pprev_ref_group_value"])
            rows.append(row)
        keep[kind] = rows
    return keep


def _num(v) -> float:
    return np.nan if v is None else float(v)


def compare_aequitas(name: str, df: pd.DataFrame, ref: dict, oracle: dict) -> list[dict]:
    "Each compared quantity: its largest |fairlib − Aequitas| over the groups of both attributes."
    kw = dict(sensitive_features=list(ATTRS), data=df, min_support=0, views="attributes")
    major = fl.audit("y", "y_pred", **kw)
    given = fl.audit("y", "y_pred", reference=ref, **kw)
    out = []
    groups = pd.DataFrame(oracle["group"])
    for aq, rate in RATES.items():
        diffs = []
        for r in groups.to_dict("records"):
            have = major.by_view(r["attribute"]).loc[r["group"], rate]
            diffs.append(abs(float(have) - _num(r[aq])))
        out.append(
            dict(
                data=name,
                quantity=f"group {rate} (Aequitas {aq})",
                compared=len(diffs),
                max_abs_diff=max(diffs),
            )
        )
    for kind, res in (("major", major), ("given", given)):
        table = pd.DataFrame(oracle[kind])
        d = res.disparities()
        for aq in DISPARITIES:
            rate = RATES[aq]
            diffs, refs = [], []
            for r in table.to_dict("records"):
                row = d[
                    (d.view == r["attribute"]) & (d.group == r["group"]) & (d.metric == rate)
                ].iloc[0]
                want = _num(r[f"{aq}_disparity"])
                diffs.append(
                    0.0 if np.isnan(want) and np.isnan(row.ratio) else abs(row.ratio - want)
                )
                refs.append(row.reference == r["reference"])
            what = "largest group" if kind == "major" else f"reference {ref}"
            out.append(
                dict(
                    data=name,
                    quantity=f"{rate} ratio to the {what} (Aequitas {aq}_disparity)",
                    compared=len(diffs),
                    max_abs_diff=float(np.nanmax(diffs)) if all(refs) else np.inf,
                )
            )
    for metric, aq in PARITY.items():
        diffs = []
        for a in ATTRS:
            v = groups[groups.attribute == a][aq].astype(float)
            want = v.min() / v.max()
            diffs.append(abs(major.value(metric, view=a) - want))
        out.append(
            dict(
                data=name,
                quantity=f"{metric} = min/max Aequitas {aq}",
                compared=len(diffs),
                max_abs_diff=max(diffs),
            )
        )
    return out


def _false_omission_rate(y_true, y_pred):
    neg = y_pred == 0
    return float((y_true[neg] == 1).mean())


def compare_fairlearn(name: str, df: pd.DataFrame) -> list[dict]:
    "fairlearn's MetricFrame difference() / ratio() (both methods) and a custom metric against fairlib's."
    import fairlearn.metrics as flm
    from sklearn.metrics import precision_score, recall_score

    out = []
    res = fl.audit(
        "y",
        "y_pred",
        sensitive_features=list(ATTRS),
        data=df,
        min_support=0,
        metrics={"recall": recall_score, "precision": precision_score, "FORP": None},
    )
    fns = {
        "selection_rate": flm.selection_rate,
        "TPR": flm.true_positive_rate,
        "FPR": flm.false_positive_rate,
        "FNR": flm.false_negative_rate,
        "TNR": flm.true_negative_rate,
    }
    for a in ATTRS:
        mf = flm.MetricFrame(
            metrics={
                **fns,
                "recall": recall_score,
                "precision": precision_score,
                "for": _false_omission_rate,
            },
            y_true=df.y.to_numpy(),
            y_pred=df.y_pred.to_numpy(),
            sensitive_features=df[a],
        )
        for method in ("between_groups", "to_overall"):
            for kind in ("difference", "ratio"):
                want = getattr(mf, kind)(method=method)
                diffs = []
                for rate in (*fns, "recall", "precision"):
                    have = getattr(res, kind)(rate, view=a, method=method)
                    diffs.append(abs(have - float(want[rate])))
                out.append(
                    dict(
                        data=name,
                        quantity=f"{a}: {kind}({method}) of 7 rates and custom metrics (fairlearn)",
                        compared=len(diffs),
                        max_abs_diff=max(diffs),
                    )
                )
        bv = res.by_view(a)
        diffs = [abs(bv.loc[g, "recall"] - v) for g, v in mf.by_group["recall"].items()]
        diffs += [abs(bv.loc[g, "FOR"] - v) for g, v in mf.by_group["for"].items()]
        out.append(
            dict(
                data=name,
                quantity=f"{a}: custom recall per group, FOR per group (fairlearn)",
                compared=len(diffs),
                max_abs_diff=max(diffs),
            )
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--aequitas-python",
        default="/tmp/aeq/bin/python",
        help="an interpreter with aequitas installed",
    )
    ap.add_argument(
        "--write-fixture", type=Path, help="write Aequitas's numbers here (the tests' oracle)"
    )
    a = ap.parse_args(argv)
    rows, fixture, version = [], {}, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (df, ref) in datasets().items():
            aeq = run_aequitas(a.aequitas_python, df, ref)
            version = aeq["version"]
            oracle = aequitas_oracle(aeq)
            fixture[name] = dict(reference=ref, **oracle)
            rows += compare_aequitas(name, df, ref, oracle)
            rows += compare_fairlearn(name, df)
    t = pd.DataFrame(rows)
    import fairlearn

    print(
        f"fairlib {fl.__version__}, Aequitas {version} (own venv), fairlearn {fairlearn.__version__}; tolerance {TOL:g}"
    )
    print(t.to_markdown(index=False, floatfmt=".3g"))
    worst = float(t.max_abs_diff.max())
    print(f"largest |difference| over {int(t.compared.sum())} compared numbers: {worst:.3g}")
    if a.write_fixture:
        fixture["aequitas_version"] = version
        a.write_fixture.write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")
        print(f"wrote {a.write_fixture}")
    return 0 if worst <= TOL else 1


if __name__ == "__main__":
    sys.exit(main())
