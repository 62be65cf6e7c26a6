"""The published numbers of the four papers as data (`fairlib/paper_values/<paper>.csv`, read by `fairlib.published`).

Two kinds of test:
* the files themselves: header, unique ids, a location for every row, every value parsing at its stated precision;
* consistency: every published number the library exposes as a public name (`PAPER_*`, `published_table11()`, the
  handbook's `CHAPTER_*`, the Texas-100X codebook's `paper_*` keys, the agent simulator's prevalence) equals the row of
  the data file, in the shape callers use. The library builds these names from the data file at import time; the test
  takes each from the module that defines it and compares it with the file, so a value that drifts from the file, or a
  reshaping that loses a row or a column, fails. The McNemar floor is a parameter of the method (a threshold the
  paper states, not a result): it stays in `fairlib.stats` and is checked against the paper here.
"""

import csv
import importlib
import importlib.resources
import math
import re
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from fairlib import published as P

COLUMNS = ["id", "table", "location", "quantity", "value", "printed", "note"]
PAPERS = ("classification_bias", "vfr", "mfarm", "fairmedagent")


def value(paper, id_):
    return P.published_value(paper, id_)


# the module that defines each public name built from the data files
HOME = {
    "PAPER_AXIS1": "fairlib.vfr.axis1",
    "PAPER_CANONICAL_B1": "fairlib.vfr.axis1",
    "PAPER_TABLE4": "fairlib.vfr.panel",
    **dict.fromkeys(
        ("PAPER_TABLE5", "PAPER_TABLE6", "PAPER_TABLE7", "PAPER_VFR_MOVEMENT", "PAPER_EQ5"),
        "fairlib.vfr.baselines",
    ),
    "published_table11": "fairlib.mfarm.experiments",
    "CHAPTER_PUBLISHED": "fairlib.handbook",
    "CHAPTER_TPR": "fairlib.handbook",
    "CHAPTER_FPR": "fairlib.handbook",
    "DEFAULT_PREVALENCE": "fairlib.agent.simulate",
    "CONFIRMATORY_MIN_DISCORDANT": "fairlib.stats",
}


def library_constant(name):
    "The library's public name `name`, from the module that defines it (and from its package's face, when it has one)."
    mod = importlib.import_module(HOME[name])
    c = getattr(mod, name)
    face = importlib.import_module(HOME[name].rsplit(".", 1)[0])
    if face.__name__ != "fairlib" and hasattr(face, name):
        assert getattr(face, name) is c, f"{face.__name__}.{name}"
    return c


def test_published_core_imports_no_paper_package():
    "fairlib.published is core: importing it loads no paper package (the packages import it, never the reverse)."
    code = (
        "import sys, fairlib.published; "
        "print(' '.join(m for m in sys.modules if m.startswith(('fairlib.vfr', 'fairlib.mfarm', 'fairlib.agent', "
        "'fairlib.handbook', 'fairlib.llm', 'fairlib.mitigation'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [], out


# ---------------------------------------------------------------------------------------------- the files themselves
def raw_rows(paper):
    text = (importlib.resources.files("fairlib") / "paper_values" / f"{paper}.csv").read_text(
        encoding="utf-8"
    )
    rows = list(csv.reader(text.splitlines()))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]], rows[1:]


@pytest.mark.parametrize("paper", PAPERS)
def test_file_header_ids_and_locations(paper):
    header, rows, raw = raw_rows(paper)
    assert header == COLUMNS
    assert rows, f"{paper}.csv has no rows"
    assert all(len(r) == len(COLUMNS) for r in raw)
    ids = [r["id"] for r in rows]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    assert not dup, f"ids not unique in {paper}.csv: {dup}"
    for r in rows:
        assert re.fullmatch(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+", r["id"]), r["id"]
        assert r["table"].strip() and r["location"].strip() and r["quantity"].strip(), r["id"]
        assert r["printed"] in ("int", "text") or re.fullmatch(r"[1-9]\d*", r["printed"]), (
            r["id"],
            r["printed"],
        )


@pytest.mark.parametrize("paper", PAPERS)
def test_every_value_parses_at_its_printed_precision(paper):
    _, rows, _ = raw_rows(paper)
    for r in rows:
        raw, pr = r["value"], r["printed"]
        if pr == "int":
            assert re.fullmatch(r"-?\d+", raw), r["id"]
        elif pr == "text":
            assert raw.strip(), r["id"]
        else:
            assert re.fullmatch(rf"-?\d+\.\d{{{int(pr)}}}", raw), (r["id"], raw, pr)
            assert math.isfinite(float(raw))
    v = P.published_values(paper)
    assert list(v.columns) == COLUMNS and len(v) == len(rows)
    assert v["value"].notna().all()
    for r, parsed in zip(rows, v["value"]):
        if r["printed"] == "int":
            assert type(parsed) is int and parsed == int(r["value"])
        elif r["printed"] == "text":
            assert parsed == {"True": True, "False": False}.get(r["value"], r["value"])
        else:
            assert type(parsed) is float and parsed == float(r["value"])


def test_tables_have_their_printed_shape():
    shapes = [
        ("vfr", "Table 3", (22, 4)),
        ("vfr", "Table 4", (12, 8)),
        ("vfr", "Table 5", (4, 5)),
        ("vfr", "Table 6", (4, 9)),
        ("vfr", "Table 7", (4, 4)),
        ("mfarm", "Table 1", (9, 2)),
        ("mfarm", "Table 4", (12, 2)),
        ("mfarm", "Table 5", (8, 6)),
        ("mfarm", "Table 6", (8, 5)),
        ("mfarm", "Table 7", (8, 6)),
        ("mfarm", "Table 8", (8, 3)),
        ("mfarm", "Table 9", (4, 4)),
        ("mfarm", "Table 10", (8, 3)),
        ("mfarm", "Table 11", (16, 8)),
        ("classification_bias", "out17", (4, 3)),
    ]
    for paper, table, shape in shapes:
        t = P.published_table(paper, table)
        assert t.shape == shape, (paper, table, t.shape)
        v = P.published_values(paper)
        key = table.replace(" ", "").lower()
        labelled = v[v.table.str.replace(" ", "").str.lower() == key]
        groups = list(dict.fromkeys(labelled.id.str.split(".").str[0]))
        prefix = key if key in groups else (groups[0] if groups else table)
        # every cell placed once
        assert t.notna().to_numpy().sum() == v.id.str.startswith(prefix + ".").sum(), (paper, table)


def test_errors_name_the_argument():
    from fairlib.core import FairlibInputError

    with pytest.raises(FairlibInputError, match="argument `paper`"):
        P.published_values("vfr-audit")
    with pytest.raises(FairlibInputError, match="argument `id`.*nearest"):
        P.published_value("vfr", "table5.B1.DI_rac")
    with pytest.raises(FairlibInputError, match="argument `table`"):
        P.published_table("vfr", "Table 12")
    with pytest.raises(FairlibInputError, match="argument `table`"):
        P.published_table("vfr", "text")  # spans groups


def test_internal_arithmetic_of_the_papers():
    "Printed numbers that the papers derive from other printed numbers agree to the printed precision."
    t11 = P.published_table("mfarm", "Table 11")
    fab = 2 * t11.accuracy * t11.mfarm / (t11.accuracy + t11.mfarm)
    assert (fab - t11.fab).abs().max() <= 1.5e-3
    t6, t11_base = (
        P.published_table("mfarm", "Table 6"),
        t11.loc[[k for k in t11.index if not k[1].endswith("_ft")]],
    )
    for k in t6.index:
        for c in t6.columns:
            assert round(t11_base.loc[k, c], 2) == pytest.approx(t6.loc[k, c]), (k, c)
    t5 = P.published_table("mfarm", "Table 5")
    for (task, model), r in t5.iterrows():
        for q in ("accuracy", "fab"):
            assert (
                r[f"{q}_base"] == t11.loc[(task, model), q]
                and r[f"{q}_ft"] == t11.loc[(task, f"{model}_ft"), q]
            )
    # the paper disagrees with itself
    assert (
        t5.loc[("ED", "Mistral"), "mfarm_base"] == 0.716
        and t11.loc[("ED", "Mistral"), "mfarm"] == 0.916
    )
    t6v = P.published_table("vfr", "Table 6")
    for b in ("B2", "B3", "B4"):
        cost = 100 * (t6v.loc["B1", "accuracy"] - t6v.loc[b, "accuracy"])
        assert value("vfr", f"eq2.accuracy_cost.{b}.accuracy_cost_pp") == pytest.approx(
            cost, abs=6e-3
        )
    mv = P.published_table("vfr", "vfr_movement")
    assert ((mv.vfr_after - mv.vfr_before) - mv.change).abs().max() < 1e-9
    f = P.published_table("fairmedagent", "floor_pooled")
    m1 = f.loc["model_1"]
    assert m1["floor"] == pytest.approx(m1["flips"] / m1["comparisons"], abs=5e-4)
    pairs = value("fairmedagent", "floor_study.pairs_per_cell")
    assert value("fairmedagent", "table2.comparisons_per_action") == 45 * 16 == pairs * 16
    t3 = P.published_table("vfr", "Table 3")
    for a in ("race", "sex", "ethnicity", "age_bucket"):
        rates = t3.loc[a].pos_rate.dropna()
        assert round(rates.max() - rates.min(), 3) == pytest.approx(t3.loc[(a, "all"), "brg"]), a
        assert t3.loc[a].n.sum() == value("vfr", "cohort.records"), a
    o = P.published_table("classification_bias", "out17")
    assert ((o.group_0 - o.group_1).abs() - o.difference).abs().max() <= 1.5e-3


# ---------------------------------------------------------------------------------------------- VFR-Audit constants
def test_paper_axis1():
    c = library_constant("PAPER_AXIS1")
    assert set(c) == {"cells", "flipped", "unstable", "stable", "mean_vfr", "max_vfr"}
    for k, v in c.items():
        assert v == value("vfr", f"axis1_grid.{k}"), k


def test_paper_canonical_b1():
    c = library_constant("PAPER_CANONICAL_B1")
    ids = {
        "cells": "method.cells_per_model",
        "flipped": "table6.B1.flipped",
        "mean_vfr": "table6.B1.mean_vfr",
        "max_vfr": "table6.B1.max_vfr",
        "kappa_mean": "table6.B1.kappa_mean",
        "kappa_EOpp": "table6.B1.kappa_EOpp",
        "kappa_EOD": "table6.B1.kappa_EOD",
    }
    assert set(c) == set(ids)
    for k, v in c.items():
        assert v == value("vfr", ids[k]), k


def test_paper_table4():
    c = library_constant("PAPER_TABLE4").set_index("model")
    t = P.published_table("vfr", "Table 4")
    assert list(t.index) == list(c.index) and list(t.columns) == list(c.columns)
    pd.testing.assert_frame_equal(t, c, check_names=False, check_dtype=False)


def test_paper_table5():
    c = library_constant("PAPER_TABLE5").set_index("baseline")
    t = P.published_table("vfr", "Table 5")
    assert list(t.columns) == list(c.columns)
    pd.testing.assert_frame_equal(t, c, check_names=False, check_dtype=False)


def test_paper_table6():
    c = library_constant("PAPER_TABLE6").set_index("baseline")
    t = P.published_table("vfr", "Table 6")
    pd.testing.assert_frame_equal(t, c[list(t.columns)], check_names=False, check_dtype=False)
    assert set(c.columns) - set(t.columns) == {
        "accuracy_cost_pp"
    }  # printed in the text (§4.2.2), not in Table 6
    assert c.loc["B1", "accuracy_cost_pp"] == 0  # B1 is the reference: zero by definition
    for b in ("B2", "B3", "B4"):
        assert c.loc[b, "accuracy_cost_pp"] == value(
            "vfr", f"eq2.accuracy_cost.{b}.accuracy_cost_pp"
        )


def test_paper_table7():
    c = library_constant("PAPER_TABLE7")
    t = P.published_table("vfr", "Table 7")
    assert len(c) == len(t) == 4
    labels = P.published_values("vfr").set_index("id").location
    for (_, row), key in zip(c.iterrows(), t.index):
        # same protocol, same order
        assert f"row '{row.protocol}'" in labels[f"table7.{key}.auroc"], (row.protocol, key)
        for col in ("auroc", "accuracy_cost_pp", "all_4_di", "vfr_stable"):
            assert row[col] == t.loc[key, col], (key, col)


def test_paper_vfr_movement():
    c = library_constant("PAPER_VFR_MOVEMENT").set_index(["metric", "attribute"])
    t = P.published_table("vfr", "vfr_movement")
    assert list(t.index) == list(c.index)
    pd.testing.assert_frame_equal(
        t[["vfr_before", "vfr_after"]], c, check_names=False, check_dtype=False
    )


def test_paper_eq5():
    c = library_constant("PAPER_EQ5")
    lo_hi = lambda p: (value("vfr", f"{p}.lo"), value("vfr", f"{p}.hi"))
    want = {
        "cross_model_cost_pp": lo_hi("eq5.cross_model_cost_pp"),
        "di_sweep_cost_pp": lo_hi("eq5.di_sweep_cost_pp"),
        "di_sweep_targets": lo_hi("eq5.di_sweep_target"),
        "reweighing_best_age_di": value("vfr", "eq2.reweighing_best_age_di"),
        "reweighing_configurations": value("vfr", "eq2.reweighing_configurations"),
    }
    assert c == want


PAPER_KEYS = (
    "paper_table3",
    "paper_base_rate_gaps",
    "paper_hospital_volume",
    "paper_race_by_ethnicity",
    "paper_overall_pos_rate",
    "paper_auroc",
)


def test_texas_codebook_file_holds_no_published_number():
    "The yaml keeps the rows and labels of Table 3; its numbers come from vfr.csv (added by codebook())."
    res = importlib.resources.files("fairlib.vfr") / "texas100x_codebook.yaml"
    raw = yaml.safe_load(res.read_text(encoding="utf-8"))
    assert not set(PAPER_KEYS[1:]) & set(raw)
    assert all(
        set(r) == {"attribute", "row", "label_printed", "label_corrected"}
        for r in raw["paper_table3"]
    )


def test_texas_codebook_published_values():
    from fairlib.vfr.texas import codebook

    cb = codebook()
    assert set(PAPER_KEYS) <= set(cb)
    keys = ["attribute", "label_printed", "label_corrected", "n", "pct", "pos_rate"]
    assert all(list(r) == keys for r in cb["paper_table3"])
    assert all(type(r["n"]) is int and type(r["pct"]) is float for r in cb["paper_table3"])
    t3 = P.published_table("vfr", "Table 3")
    strata = [k for k in t3.index if k[0] != "hospital_volume" and k[1] != "all"]
    assert len(cb["paper_table3"]) == len(strata)
    labels = P.published_values("vfr").set_index("id").location
    for r, k in zip(cb["paper_table3"], strata):  # same order as printed
        assert r["attribute"] == k[0]
        ge = lambda t: t.replace(">= 65", "≥ 65")
        assert ge(f"row '{r['label_printed']}'") in ge(labels[f"table3.{k[0]}.{k[1]}.n"]), (r, k)
        assert (r["n"], r["pct"], r["pos_rate"]) == (
            t3.loc[k, "n"],
            t3.loc[k, "pct"],
            t3.loc[k, "pos_rate"],
        ), k
    for a, g in cb["paper_base_rate_gaps"].items():
        assert g == t3.loc[(a, "all"), "brg"], a
    hv = cb["paper_hospital_volume"]
    for k in (10, 50, 100, 200):
        assert hv[f"top_{k}"]["records"] == t3.loc[("hospital_volume", f"top{k}"), "n"]
        assert hv[f"top_{k}"]["pct"] == t3.loc[("hospital_volume", f"top{k}"), "pct"]
    assert hv["median_records_per_site"] == t3.loc[("hospital_volume", "median_per_site"), "n"]
    assert hv["quartiles_records_per_site"] == [
        value("vfr", "authors.hospital_volume.q1_per_site"),
        hv["median_records_per_site"],
        value("vfr", "authors.hospital_volume.q3_per_site"),
    ]
    race = cb["labels"]["RACE"]
    for code, share in cb["paper_race_by_ethnicity"].items():
        want = (
            value("vfr", "cohort.black_coded_hispanic_pct") / 100
            if race[code] == "Black"
            else value("vfr", f"authors.race_by_ethnicity.code{code}")
        )
        assert share == pytest.approx(want, abs=1e-12), code
    assert cb["paper_overall_pos_rate"] == pytest.approx(
        value("vfr", "cohort.positive_rate_pct") / 100, abs=1e-12
    )
    assert cb["paper_auroc"] == {
        "xgboost_full_80_20": value("vfr", "table7.single_split.auroc"),
        "xgboost_full_70_15_15": value("vfr", "table7.stratified_70_15_15.auroc"),
        "xgboost_admission_lean": value("vfr", "table7.admission_lean.auroc"),
    }
    assert cb["paper_auroc"]["xgboost_full_80_20"] == value("vfr", "canonical.b1.auroc")
    assert (cb["n_records"], cb["n_hospitals"]) == (
        value("vfr", "cohort.records"),
        value("vfr", "cohort.hospitals"),
    )


# ---------------------------------------------------------------------------------------------- mFARM
def test_published_table11():
    c = library_constant("published_table11")()
    t = P.published_table("mfarm", "Table 11")
    assert [(task, model.replace(" (ft)", "_ft")) for task, model in zip(c.task, c.model)] == list(
        t.index
    )
    got = c.drop(columns=["task", "model"]).set_axis(t.index)
    assert list(got.columns) == list(t.columns)
    pd.testing.assert_frame_equal(got, t, check_names=False, check_dtype=False)


# ------------------------------------------------------------------------------------------ classification bias chapter
def test_chapter_published():
    c = library_constant("CHAPTER_PUBLISHED")
    o = P.published_table("classification_bias", "out17")
    for k, v in c.items():
        m = re.fullmatch(r"(ppr|tpr|fpr|accuracy)_([01])", k)
        if m:
            assert v == o.loc[m.group(1), f"group_{m.group(2)}"], k
        elif k == "chapter_verdict":  # printed with a full stop
            assert value("classification_bias", "out17_summary.verdict") == v + "."
        else:
            assert v == value("classification_bias", f"out17_summary.{k}"), k
    assert set(c) == {f"{r}_{g}" for r in ("ppr", "tpr", "fpr", "accuracy") for g in (0, 1)} | {
        "demographic_parity_diff",
        "equalized_odds_diff",
        "disparate_impact_ratio",
        "chapter_verdict",
    }


def test_chapter_simulation_parameters():
    tpr, fpr = library_constant("CHAPTER_TPR"), library_constant("CHAPTER_FPR")
    assert tpr == {g: value("classification_bias", f"in16.tpr.group_{g}") for g in (0, 1)}
    assert (
        fpr
        == value("classification_bias", "in16.fpr.group_0")
        == value("classification_bias", "in16.fpr.group_1")
    )


# ---------------------------------------------------------------------------------------------- FairMedAgent
def test_agent_simulator_prevalence():
    prev = library_constant("DEFAULT_PREVALENCE")
    for a in ("icu_escalation", "admit"):
        assert prev[a] == pytest.approx(
            value("fairmedagent", f"prevalence.{a}.pct") / 100, abs=1e-12
        ), a


def test_confirmatory_discordant_floor():
    assert library_constant("CONFIRMATORY_MIN_DISCORDANT") == value(
        "fairmedagent", "stats.confirmatory_min_discordant"
    )
