"""The published numbers of the four papers as data (`fairlib/paper_values/<paper>.csv`, read by `fairlib.published`).

Two kinds of test:
* the files themselves: header, unique ids, a location for every row, every value parsing at its stated precision;
* consistency: every published number the library still holds as a constant (`PAPER_*`, `published_table11()`, the
  handbook's `CHAPTER_*`, the Texas-100X codebook's `paper_*` keys, the agent simulator's prevalence, the McNemar floor)
  equals the row of the data file. Each constant is looked up where it lived before the module split and then in the
  sub-packages it may have moved to; a constant found nowhere fails. Once a constant is a read of the data file the
  test still holds, trivially.

Until `nbs/07_published.ipynb` is exported, `fairlib.published` does not exist: its definitions are then taken from the
notebook's `#| export` cells.
"""
import csv
import importlib
import importlib.resources
import json
import math
import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "nbs" / "07_published.ipynb"
COLUMNS = ["id", "table", "location", "quantity", "value", "printed", "note"]


def _published():
    "fairlib.published if exported, else the notebook's export cells run in a fresh namespace."
    try:
        return importlib.import_module("fairlib.published")
    except ModuleNotFoundError as e:
        if e.name != "fairlib.published": raise
    ns = {"__name__": "fairlib_published_from_notebook"}
    for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and re.match(r"\s*#\|\s*export\b", src): exec(compile(src, str(NOTEBOOK), "exec"), ns)
    return SimpleNamespace(**{k: v for k, v in ns.items() if not k.startswith("__")})


P = _published()
PAPERS = ("classification_bias", "vfr", "mfarm", "fairmedagent")


def value(paper, id_):
    return P.published_value(paper, id_)


# where a constant may live: its module before the split first, then the sub-packages of the reorganisation
CANDIDATES = ("fairlib.vfr", "fairlib.vfr.baselines", "fairlib.vfr.panel", "fairlib.vfr.axis1", "fairlib.vfr.published",
              "fairlib.mfarm", "fairlib.mfarm.experiments")


def library_constant(name, old):
    "The library's constant `name`, from module `old` or else from the first candidate module that defines it."
    tried = []
    for modname in dict.fromkeys((old, *CANDIDATES)):
        try:
            mod = importlib.import_module(modname)
        except Exception as e:   # a module that no longer exists (or is half-moved) is one more place it is not
            tried.append(f"{modname} ({type(e).__name__})"); continue
        with warnings.catch_warnings():   # an old name kept as a deprecated alias still counts
            warnings.simplefilter("ignore", DeprecationWarning)
            if hasattr(mod, name): return getattr(mod, name)
        tried.append(f"{modname} (no {name})")
    pytest.fail(f"the published constant {name} is in none of: {'; '.join(tried)}")


# ---------------------------------------------------------------------------------------------- the files themselves
def raw_rows(paper):
    text = (importlib.resources.files("fairlib") / "paper_values" / f"{paper}.csv").read_text(encoding="utf-8")
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
        assert r["printed"] in ("int", "text") or re.fullmatch(r"[1-9]\d*", r["printed"]), (r["id"], r["printed"])


@pytest.mark.parametrize("paper", PAPERS)
def test_every_value_parses_at_its_printed_precision(paper):
    _, rows, _ = raw_rows(paper)
    for r in rows:
        raw, pr = r["value"], r["printed"]
        if pr == "int": assert re.fullmatch(r"-?\d+", raw), r["id"]
        elif pr == "text": assert raw.strip(), r["id"]
        else:
            assert re.fullmatch(rf"-?\d+\.\d{{{int(pr)}}}", raw), (r["id"], raw, pr)
            assert math.isfinite(float(raw))
    v = P.published_values(paper)
    assert list(v.columns) == COLUMNS and len(v) == len(rows)
    assert v["value"].notna().all()
    for r, parsed in zip(rows, v["value"]):
        if r["printed"] == "int": assert type(parsed) is int and parsed == int(r["value"])
        elif r["printed"] == "text": assert parsed == {"True": True, "False": False}.get(r["value"], r["value"])
        else: assert type(parsed) is float and parsed == float(r["value"])


def test_tables_have_their_printed_shape():
    for paper, table, shape in [("vfr", "Table 3", (22, 4)), ("vfr", "Table 4", (12, 8)), ("vfr", "Table 5", (4, 5)),
                                ("vfr", "Table 6", (4, 9)), ("vfr", "Table 7", (4, 4)), ("mfarm", "Table 1", (9, 2)),
                                ("mfarm", "Table 4", (12, 2)), ("mfarm", "Table 5", (8, 6)), ("mfarm", "Table 6", (8, 5)),
                                ("mfarm", "Table 7", (8, 6)), ("mfarm", "Table 8", (8, 3)), ("mfarm", "Table 9", (4, 4)),
                                ("mfarm", "Table 10", (8, 3)), ("mfarm", "Table 11", (16, 8)),
                                ("classification_bias", "out17", (4, 3))]:
        t = P.published_table(paper, table)
        assert t.shape == shape, (paper, table, t.shape)
        v = P.published_values(paper)
        key = table.replace(" ", "").lower()
        labelled = v[v.table.str.replace(" ", "").str.lower() == key]
        groups = list(dict.fromkeys(labelled.id.str.split(".").str[0]))
        prefix = key if key in groups else (groups[0] if groups else table)
        assert t.notna().to_numpy().sum() == v.id.str.startswith(prefix + ".").sum(), (paper, table)   # every cell placed once


def test_errors_name_the_argument():
    from fairlib.core import FairlibInputError
    with pytest.raises(FairlibInputError, match="argument `paper`"): P.published_values("vfr-audit")
    with pytest.raises(FairlibInputError, match="argument `id`.*nearest"): P.published_value("vfr", "table5.B1.DI_rac")
    with pytest.raises(FairlibInputError, match="argument `table`"): P.published_table("vfr", "Table 12")
    with pytest.raises(FairlibInputError, match="argument `table`"): P.published_table("vfr", "text")   # spans groups


def test_internal_arithmetic_of_the_papers():
    "Printed numbers that the papers derive from other printed numbers agree to the printed precision."
    t11 = P.published_table("mfarm", "Table 11")
    fab = 2 * t11.accuracy * t11.mfarm / (t11.accuracy + t11.mfarm)
    assert (fab - t11.fab).abs().max() <= 1.5e-3
    t6, t11_base = P.published_table("mfarm", "Table 6"), t11.loc[[k for k in t11.index if not k[1].endswith("_ft")]]
    for k in t6.index:
        for c in t6.columns: assert round(t11_base.loc[k, c], 2) == pytest.approx(t6.loc[k, c]), (k, c)
    t5 = P.published_table("mfarm", "Table 5")
    for (task, model), r in t5.iterrows():
        assert r.accuracy_base == t11.loc[(task, model), "accuracy"] and r.accuracy_ft == t11.loc[(task, f"{model}_ft"), "accuracy"]
        assert r.fab_base == t11.loc[(task, model), "fab"] and r.fab_ft == t11.loc[(task, f"{model}_ft"), "fab"]
    assert t5.loc[("ED", "Mistral"), "mfarm_base"] == 0.716 and t11.loc[("ED", "Mistral"), "mfarm"] == 0.916   # the paper disagrees with itself
    t6v = P.published_table("vfr", "Table 6")
    for b in ("B2", "B3", "B4"):
        assert value("vfr", f"eq2.accuracy_cost.{b}.accuracy_cost_pp") == pytest.approx(100 * (t6v.loc["B1", "accuracy"] - t6v.loc[b, "accuracy"]), abs=6e-3)
    mv = P.published_table("vfr", "vfr_movement")
    assert ((mv.vfr_after - mv.vfr_before) - mv.change).abs().max() < 1e-9
    f = P.published_table("fairmedagent", "floor_pooled")
    assert f.loc["model_1", "floor"] == pytest.approx(f.loc["model_1", "flips"] / f.loc["model_1", "comparisons"], abs=5e-4)
    assert value("fairmedagent", "table2.comparisons_per_action") == 45 * 16 == value("fairmedagent", "floor_study.pairs_per_cell") * 16
    t3 = P.published_table("vfr", "Table 3")
    for a in ("race", "sex", "ethnicity", "age_bucket"):
        rates = t3.loc[a].pos_rate.dropna()
        assert round(rates.max() - rates.min(), 3) == pytest.approx(t3.loc[(a, "all"), "brg"]), a
        assert t3.loc[a].n.sum() == value("vfr", "cohort.records"), a
    o = P.published_table("classification_bias", "out17")
    assert ((o.group_0 - o.group_1).abs() - o.difference).abs().max() <= 1.5e-3


# ---------------------------------------------------------------------------------------------- VFR-Audit constants
def test_paper_axis1():
    c = library_constant("PAPER_AXIS1", "fairlib.vfr")
    assert set(c) == {"cells", "flipped", "unstable", "stable", "mean_vfr", "max_vfr"}
    for k, v in c.items(): assert v == value("vfr", f"axis1_grid.{k}"), k


def test_paper_canonical_b1():
    c = library_constant("PAPER_CANONICAL_B1", "fairlib.vfr")
    ids = {"cells": "method.cells_per_model", "flipped": "table6.B1.flipped", "mean_vfr": "table6.B1.mean_vfr",
           "max_vfr": "table6.B1.max_vfr", "kappa_mean": "table6.B1.kappa_mean", "kappa_EOpp": "table6.B1.kappa_EOpp",
           "kappa_EOD": "table6.B1.kappa_EOD"}
    assert set(c) == set(ids)
    for k, v in c.items(): assert v == value("vfr", ids[k]), k


def test_paper_table4():
    c = library_constant("PAPER_TABLE4", "fairlib.models").set_index("model")
    t = P.published_table("vfr", "Table 4")
    assert list(t.index) == list(c.index) and list(t.columns) == list(c.columns)
    pd.testing.assert_frame_equal(t, c, check_names=False, check_dtype=False)


def test_paper_table5():
    c = library_constant("PAPER_TABLE5", "fairlib.mitigation").set_index("baseline")
    t = P.published_table("vfr", "Table 5")
    assert list(t.columns) == list(c.columns)
    pd.testing.assert_frame_equal(t, c, check_names=False, check_dtype=False)


def test_paper_table6():
    c = library_constant("PAPER_TABLE6", "fairlib.mitigation").set_index("baseline")
    t = P.published_table("vfr", "Table 6")
    pd.testing.assert_frame_equal(t, c[list(t.columns)], check_names=False, check_dtype=False)
    assert set(c.columns) - set(t.columns) == {"accuracy_cost_pp"}     # printed in the text (§4.2.2), not in Table 6
    assert c.loc["B1", "accuracy_cost_pp"] == 0                         # B1 is the reference: zero by definition
    for b in ("B2", "B3", "B4"): assert c.loc[b, "accuracy_cost_pp"] == value("vfr", f"eq2.accuracy_cost.{b}.accuracy_cost_pp")


def test_paper_table7():
    c = library_constant("PAPER_TABLE7", "fairlib.mitigation")
    t = P.published_table("vfr", "Table 7")
    assert len(c) == len(t) == 4
    labels = P.published_values("vfr").set_index("id").location
    for (_, row), key in zip(c.iterrows(), t.index):
        assert f"row '{row.protocol}'" in labels[f"table7.{key}.auroc"], (row.protocol, key)   # same protocol, same order
        for col in ("auroc", "accuracy_cost_pp", "all_4_di", "vfr_stable"): assert row[col] == t.loc[key, col], (key, col)


def test_paper_vfr_movement():
    c = library_constant("PAPER_VFR_MOVEMENT", "fairlib.mitigation").set_index(["metric", "attribute"])
    t = P.published_table("vfr", "vfr_movement")
    assert list(t.index) == list(c.index)
    pd.testing.assert_frame_equal(t[["vfr_before", "vfr_after"]], c, check_names=False, check_dtype=False)


def test_paper_eq5():
    c = library_constant("PAPER_EQ5", "fairlib.mitigation")
    want = {"cross_model_cost_pp": (value("vfr", "eq5.cross_model_cost_pp.lo"), value("vfr", "eq5.cross_model_cost_pp.hi")),
            "di_sweep_cost_pp": (value("vfr", "eq5.di_sweep_cost_pp.lo"), value("vfr", "eq5.di_sweep_cost_pp.hi")),
            "di_sweep_targets": (value("vfr", "eq5.di_sweep_target.lo"), value("vfr", "eq5.di_sweep_target.hi")),
            "reweighing_best_age_di": value("vfr", "eq2.reweighing_best_age_di"),
            "reweighing_configurations": value("vfr", "eq2.reweighing_configurations")}
    assert c == want


def _codebook():
    for sub in ("vfr", "data"):   # the codebook's home after and before the module split
        res = importlib.resources.files("fairlib") / sub / "texas100x_codebook.yaml"
        if res.is_file(): return yaml.safe_load(res.read_text(encoding="utf-8"))
    pytest.fail("texas100x_codebook.yaml is in neither fairlib.vfr nor fairlib.data")


def test_texas_codebook_published_values():
    cb = _codebook()
    t3 = P.published_table("vfr", "Table 3")
    strata = [k for k in t3.index if k[0] != "hospital_volume" and k[1] != "all"]
    assert len(cb["paper_table3"]) == len(strata)
    labels = P.published_values("vfr").set_index("id").location
    for r, k in zip(cb["paper_table3"], strata):       # same order as printed
        assert r["attribute"] == k[0]
        assert f"row '{r['label_printed']}'".replace(">= 65", "≥ 65") in labels[f"table3.{k[0]}.{k[1]}.n"].replace(">= 65", "≥ 65"), (r, k)
        assert (r["n"], r["pct"], r["pos_rate"]) == (t3.loc[k, "n"], t3.loc[k, "pct"], t3.loc[k, "pos_rate"]), k
    for a, g in cb["paper_base_rate_gaps"].items(): assert g == t3.loc[(a, "all"), "brg"], a
    hv = cb["paper_hospital_volume"]
    for k in (10, 50, 100, 200):
        assert hv[f"top_{k}"]["records"] == t3.loc[("hospital_volume", f"top{k}"), "n"]
        assert hv[f"top_{k}"]["pct"] == t3.loc[("hospital_volume", f"top{k}"), "pct"]
    assert hv["median_records_per_site"] == t3.loc[("hospital_volume", "median_per_site"), "n"]
    assert hv["quartiles_records_per_site"] == [value("vfr", "authors.hospital_volume.q1_per_site"),
                                                hv["median_records_per_site"], value("vfr", "authors.hospital_volume.q3_per_site")]
    race = cb["labels"]["RACE"]
    for code, share in cb["paper_race_by_ethnicity"].items():
        want = value("vfr", "cohort.black_coded_hispanic_pct") / 100 if race[code] == "Black" else value("vfr", f"authors.race_by_ethnicity.code{code}")
        assert share == pytest.approx(want, abs=1e-12), code
    assert cb["paper_overall_pos_rate"] == pytest.approx(value("vfr", "cohort.positive_rate_pct") / 100, abs=1e-12)
    assert cb["paper_auroc"] == {"xgboost_full_80_20": value("vfr", "table7.single_split.auroc"),
                                 "xgboost_full_70_15_15": value("vfr", "table7.stratified_70_15_15.auroc"),
                                 "xgboost_admission_lean": value("vfr", "table7.admission_lean.auroc")}
    assert cb["paper_auroc"]["xgboost_full_80_20"] == value("vfr", "canonical.b1.auroc")
    assert (cb["n_records"], cb["n_hospitals"]) == (value("vfr", "cohort.records"), value("vfr", "cohort.hospitals"))


# ---------------------------------------------------------------------------------------------- mFARM
def test_published_table11():
    c = library_constant("published_table11", "fairlib.mfarm")()
    t = P.published_table("mfarm", "Table 11")
    assert [(task, model.replace(" (ft)", "_ft")) for task, model in zip(c.task, c.model)] == list(t.index)
    got = c.drop(columns=["task", "model"]).set_axis(t.index)
    assert list(got.columns) == list(t.columns)
    pd.testing.assert_frame_equal(got, t, check_names=False, check_dtype=False)


# ---------------------------------------------------------------------------------------------- classification bias chapter
def test_chapter_published():
    c = library_constant("CHAPTER_PUBLISHED", "fairlib.handbook")
    o = P.published_table("classification_bias", "out17")
    for k, v in c.items():
        m = re.fullmatch(r"(ppr|tpr|fpr|accuracy)_([01])", k)
        if m: assert v == o.loc[m.group(1), f"group_{m.group(2)}"], k
        elif k == "chapter_verdict": assert value("classification_bias", "out17_summary.verdict") == v + "."   # printed with a full stop
        else: assert v == value("classification_bias", f"out17_summary.{k}"), k
    assert set(c) == {f"{r}_{g}" for r in ("ppr", "tpr", "fpr", "accuracy") for g in (0, 1)} | {
        "demographic_parity_diff", "equalized_odds_diff", "disparate_impact_ratio", "chapter_verdict"}


def test_chapter_simulation_parameters():
    tpr, fpr = library_constant("CHAPTER_TPR", "fairlib.handbook"), library_constant("CHAPTER_FPR", "fairlib.handbook")
    assert tpr == {0: value("classification_bias", "in16.tpr.group_0"), 1: value("classification_bias", "in16.tpr.group_1")}
    assert fpr == value("classification_bias", "in16.fpr.group_0") == value("classification_bias", "in16.fpr.group_1")


# ---------------------------------------------------------------------------------------------- FairMedAgent
def test_agent_simulator_prevalence():
    prev = library_constant("DEFAULT_PREVALENCE", "fairlib.agent.simulate")
    assert prev["icu_escalation"] == pytest.approx(value("fairmedagent", "prevalence.icu_escalation.pct") / 100, abs=1e-12)
    assert prev["admit"] == pytest.approx(value("fairmedagent", "prevalence.admit.pct") / 100, abs=1e-12)


def test_confirmatory_discordant_floor():
    assert library_constant("CONFIRMATORY_MIN_DISCORDANT", "fairlib.stats") == value("fairmedagent", "stats.confirmatory_min_discordant")
