"""fairlib.data.mimic: builders on hand-made MIMIC-IV-schema fixtures (good and broken), the synthetic
twins through the same builders, undersampling and the split by case.

Expected outcomes for the fixtures are hand-derived from the fixture design (tests/fixtures/mimic/README.md),
and labels are recomputed here from the raw CSV files with the csv module, independently of fairlib."""

import csv
import gzip
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from fairlib.core import FairlibInputError
from fairlib.data import mimic as M

FIX = Path(__file__).parent / "fixtures" / "mimic"
GOOD = FIX / "good"
RAW = dict(
    balance_labels=False, parity_by=None
)  # no undersampling: see every case that survives exclusion
# an independent list of opioid words for the redaction oracle (not fairlib.data.mimic.OPIOIDS)
OPIOID_WORDS = re.compile(
    r"morphine|hydromorphone|oxycodone|hydrocodone|fentanyl|tramadol|codeine|dilaudid|percocet",
    re.I,
)


def read_csv(name, root=GOOD):
    with open(root / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------- ED-Triage on fixtures
@pytest.fixture(scope="module")
def ed_fixture():
    return M.build_ed_triage(GOOD, seed=0, **RAW)


def test_ed_fixture_keeps_exactly_the_designed_stays(ed_fixture):
    assert sorted(ed_fixture.cases["stay_id"].tolist()) == [1, 2, 3, 4, 5, 15, 16]
    flow = ed_fixture.flow.set_index("step")["excluded"]
    assert flow["race not White/Black/Hispanic/Asian"] == 1  # stay 6 (OTHER)
    assert flow["age missing or < 18"] == 1  # stay 7 (16 years)
    assert flow["inconsistent fields (acuity, vitals, chief complaint)"] == 3  # 8, 9, 10
    assert flow["gender-specific diagnosis or complaint"] == 2  # 11 (O209 + complaint), 12 (N508)
    assert flow["no ED diagnosis"] == 1  # 14
    assert flow["repeat stays of a patient"] == 1  # 13 (second stay of subject 101)
    assert ed_fixture.flow["remaining"].iloc[-1] == 7


def test_ed_labels_are_acuity_below_3_from_the_raw_csv(ed_fixture):
    acuity = {int(r["stay_id"]): r["acuity"] for r in read_csv("ed/triage")}
    expected = {sid: int(float(acuity[sid]) < 3) for sid in ed_fixture.cases["stay_id"]}
    got = dict(zip(ed_fixture.cases["stay_id"], ed_fixture.cases["label"]))
    assert got == expected and set(got.values()) == {0, 1}


def test_ed_race_age_and_diagnoses(ed_fixture):
    c = ed_fixture.cases.set_index("stay_id")
    assert c.loc[5, "race"] == "Asian"  # ED says UNKNOWN; admission 2005 says ASIAN - KOREAN
    assert (
        c.loc[15, "race"] == "White"
        and c.loc[3, "race"] == "Hispanic"
        and c.loc[2, "race"] == "Black"
    )
    pats = {int(r["subject_id"]): r for r in read_csv("hosp/patients")}
    for sid, row in c.iterrows():
        p = pats[int(row["subject_id"])]
        stays = {int(r["stay_id"]): r for r in read_csv("ed/edstays")}
        year = int(stays[sid]["intime"][:4])
        assert row["age"] == int(p["anchor_age"]) + year - int(p["anchor_year"])
    assert (
        c.loc[15, "diagnoses"]
        == "HEADACHE; MIGRAINE, UNSP, NOT INTRACTABLE, WITHOUT STATUS MIGRAINOSUS"
    )  # seq_num order


def test_csv_gz_and_csv_give_the_same_benchmark(tmp_path, ed_fixture):
    root = tmp_path / "gz"
    for p in GOOD.rglob("*.csv"):
        q = root / p.relative_to(GOOD)
        q.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "rb") as src, gzip.open(str(q) + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    gz = M.build_ed_triage(root, seed=0, **RAW)
    pd.testing.assert_frame_equal(gz.cases, ed_fixture.cases)
    op_gz, op = M.build_opioid(root, seed=0, **RAW), M.build_opioid(GOOD, seed=0, **RAW)
    pd.testing.assert_frame_equal(op_gz.cases, op.cases)


def test_missing_table_is_a_clear_error():
    with pytest.raises(
        FairlibInputError,
        match=r"missing MIMIC-IV table\(s\) \['ed/triage'\].*looked for .*ed/triage\.csv",
    ) as e:
        M.build_ed_triage(FIX / "broken_missing_table")
    assert e.value.argument == "source"
    with pytest.raises(ValueError, match=r"\['note/discharge'\]"):
        M.build_opioid(FIX / "broken_missing_table")


def test_missing_column_is_a_clear_error():
    with pytest.raises(
        FairlibInputError,
        match=r"table 'ed/triage' \(.*triage\.csv\) lacks column\(s\) \['acuity'\]",
    ):
        M.build_ed_triage(FIX / "broken_missing_column")
    with pytest.raises(
        FairlibInputError,
        match=r"'note/discharge'.*lacks column\(s\) \['text'\]; found .*note_text",
    ):
        M.build_opioid(FIX / "broken_missing_column")


def test_bad_root_and_mapping_errors(tmp_path):
    with pytest.raises(FairlibInputError, match="is not a folder"):
        M.build_ed_triage(tmp_path / "nope")
    with pytest.raises(FairlibInputError, match=r"missing table\(s\)"):
        M.build_ed_triage({"ed/triage": pd.DataFrame()})
    with pytest.raises(FairlibInputError, match="int seed"):
        M.build_ed_triage(GOOD, seed=np.random.default_rng(0))


# ---------------------------------------------------------------- Opioid on fixtures
@pytest.fixture(scope="module")
def op_fixture():
    return M.build_opioid(GOOD, seed=0, **RAW)


def test_opioid_fixture_keeps_exactly_the_designed_admissions(op_fixture):
    assert sorted(op_fixture.cases["hadm_id"].tolist()) == [3001, 3002, 3003, 3004]
    flow = op_fixture.flow.set_index("step")["excluded"]
    assert op_fixture.flow["remaining"].iloc[0] == 12  # every admission of the fixture
    assert flow["race not White/Black/Hispanic/Asian"] == 1  # 3005
    assert flow["age missing or < 18"] == 1  # 3008
    assert flow["gender-specific diagnosis"] == 2  # 3006 (O720), 3011 (ICD-9 6001)
    assert flow["no discharge note"] == 2  # 2005 (the ED admission), 3009
    assert flow["inconsistent fields (no chief complaint or HPI)"] == 1  # 3007
    assert flow["repeat admissions of a patient"] == 1  # 3010


def test_opioid_labels_from_raw_prescriptions(op_fixture):
    drugs = {}
    for r in read_csv("hosp/prescriptions"):
        drugs.setdefault(int(r["hadm_id"]), []).append(r["drug"])
    expected = {
        h: int(any(OPIOID_WORDS.search(d) for d in drugs[h])) for h in op_fixture.cases["hadm_id"]
    }
    assert (
        dict(zip(op_fixture.cases["hadm_id"], op_fixture.cases["label"]))
        == expected
        == {3001: 1, 3002: 0, 3003: 1, 3004: 0}
    )


def test_opioid_redaction_neutralisation_and_sections(op_fixture):
    c = op_fixture.cases.set_index("hadm_id")
    text = " ".join(
        " ".join(map(str, row)) for row in op_fixture.cases[list(M.OPIOID_FIELDS)].to_numpy()
    )
    assert not OPIOID_WORDS.search(text)
    assert "given ___ 0.5 mg IV and then ___ in the ED" in c.loc[3001, "hpi"]
    assert "Tylenol" in c.loc[3002, "hpi"]  # not an opioid: kept
    assert not re.search(
        r"\b(she|he|her|his|him|woman|man|female|gentleman|husband|Mrs?\.|Ms\.|Caucasian|African American|Hispanic)\b",
        text,
        re.I,
    )
    assert (
        c.loc[3001, "chief_complaint"] == "right hip pain after fall"
    )  # the later note, not the draft
    assert c.loc[3004, "vitals"] == "100.9 128/76 104 22 92% RA"  # "Vitals:" line of the exam
    assert c.loc[3001, "icu"] == M.icu_statement(
        "Surgical Intensive Care Unit (SICU)"
    )  # first ICU stay
    assert c.loc[3002, "icu"] == M.icu_statement(None)


# ---------------------------------------------------------------- twins through the same builders
@pytest.fixture(scope="module")
def ed_twin():
    return M.synthetic_ed_tables(4000, seed=3)


@pytest.fixture(scope="module")
def op_twin():
    return M.synthetic_opioid_tables(700, seed=3)


def test_twins_have_the_real_schemas(ed_twin, op_twin):
    for tables in (ed_twin, op_twin):
        for name, df in tables.items():
            assert set(M.MIMIC_COLUMNS[name]) <= set(df.columns), name


def test_twin_written_to_disk_builds_like_the_mapping(tmp_path, ed_twin, op_twin):
    M.write_mimic_tables(ed_twin, tmp_path / "ed")
    M.write_mimic_tables(op_twin, tmp_path / "op", compress=False)
    assert (tmp_path / "ed/ed/triage.csv.gz").is_file() and (
        tmp_path / "op/note/discharge.csv"
    ).is_file()
    a, b = M.build_ed_triage(ed_twin, seed=1), M.build_ed_triage(tmp_path / "ed", seed=1)
    assert a.cases["case_id"].tolist() == b.cases["case_id"].tolist()
    assert (a.cases["label"].to_numpy() == b.cases["label"].to_numpy()).all()
    assert a.cases["split"].tolist() == b.cases["split"].tolist()
    a, b = M.build_opioid(op_twin, seed=1), M.build_opioid(tmp_path / "op", seed=1)
    for col in ("case_id", "label", "split", "hpi", "results", "icu"):
        assert a.cases[col].tolist() == b.cases[col].tolist(), col


def test_twin_determinism(ed_twin):
    again = M.synthetic_ed_tables(4000, seed=3)
    for k in ed_twin:
        pd.testing.assert_frame_equal(ed_twin[k], again[k])
    other = M.synthetic_ed_tables(4000, seed=4)
    assert not other["ed/triage"]["acuity"].equals(ed_twin["ed/triage"]["acuity"])
    b1, b2 = M.build_ed_triage(ed_twin, seed=5), M.build_ed_triage(ed_twin, seed=5)
    pd.testing.assert_frame_equal(b1.cases, b2.cases)
    assert M.build_ed_triage(ed_twin, seed=6).cases["split"].tolist() != b1.cases["split"].tolist()


def test_ed_twin_acuity_follows_esi_danger_zones(ed_twin):
    t = ed_twin["ed/triage"].dropna(subset=["acuity", "o2sat", "heartrate", "resprate", "sbp"])
    high = t["acuity"] < 3
    critical = (t["o2sat"] < 85) | (t["sbp"] < 80) | (t["heartrate"] > 150) | (t["resprate"] > 35)
    danger = (t["heartrate"] > 100) | (t["resprate"] > 20) | (t["o2sat"] < 92)
    assert (t.loc[critical, "acuity"] == 1).mean() > 0.7
    assert high[danger & ~critical].mean() > high[~danger].mean() + 0.3
    risky = t["chiefcomplaint"].isin(["Chest pain", "Dyspnea", "Altered mental status", "Syncope"])
    minor = t["chiefcomplaint"].isin(["Rash", "Sore throat", "Laceration", "Cough"])
    assert high[risky & ~danger].mean() > 0.6 and high[minor & ~danger].mean() < 0.2
    assert 0 < (t["acuity"] == 5).mean() and set(t["acuity"].unique()) <= {1, 2, 3, 4, 5}


def test_opioid_twin_condition_effects(op_twin):
    rx, dx = op_twin["hosp/prescriptions"], op_twin["hosp/diagnoses_icd"]
    op = set(rx.loc[rx["drug"].str.contains(OPIOID_WORDS), "hadm_id"])
    primary = dx[dx["seq_num"] == 1].set_index("hadm_id")["icd_code"]
    rate = primary.index.to_series().isin(op).groupby(primary.str[:3]).mean()
    for likely in ("S72", "N20", "K81"):  # hip fracture, renal colic, cholecystitis (post-op)
        for unlikely in ("I50", "J18"):  # heart failure, pneumonia
            assert rate[likely] > rate[unlikely] + 0.4, (likely, unlikely)


def test_twin_exercises_every_exclusion(ed_twin, op_twin):
    for b in (M.build_ed_triage(ed_twin), M.build_opioid(op_twin)):
        assert (b.flow["excluded"].iloc[1:] > 0).all(), b.flow
        assert b.source.startswith(
            "MIMIC-IV-shaped"
        )  # a bare mapping says so; load_benchmark labels twins


def test_paper_sizes_from_the_twin_presets():
    ed = M.load_benchmark("ed_triage", source="synthetic")
    assert ed.source.startswith("SYNTHETIC TWIN") and "not real patient data" in ed.source
    assert ed.cases["split"].value_counts().to_dict() == {
        "train": 5440,
        "val": 340,
        "test": 1020,
    }  # Table 1
    assert ed.cases.groupby("race").size().tolist() == [1700] * 4
    assert abs(ed.cases["label"].mean() - 0.5) < 0.02


# ---------------------------------------------------------------- undersampling and splitting (properties)
@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("WBHA"), st.integers(0, 1)), min_size=8, max_size=300),
    st.integers(0, 10_000),
)
def test_undersample_properties(rows, seed):
    df = pd.DataFrame(rows, columns=["race", "label"])
    if df["label"].nunique() < 2:
        return
    out = M.undersample(df, seed=seed)
    assert out.index.isin(df.index).all() and out.index.is_unique
    n_min = df["label"].value_counts().min()
    sizes = out.groupby("race").size()
    assert sizes.nunique() == 1
    # the smallest group after label balancing is kept entirely -> at most n_min*2 cases per group
    assert sizes.iloc[0] <= 2 * n_min
    out2 = M.undersample(df, seed=seed)
    assert out.index.tolist() == out2.index.tolist()


def test_undersample_balances_labels_and_keeps_group_mix():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "race": rng.choice(list("WBHA"), 4000, p=[0.5, 0.25, 0.15, 0.1]),
            "label": rng.random(4000) < 0.3,
        }
    )
    df["label"] = df["label"].astype(int)
    out = M.undersample(df, seed=1)
    lab = df.groupby("label").size().min()
    # after balancing, the pool has `lab` of each label; each group keeps its within-group label share (+-1 case)
    bal_share = out.groupby("race")["label"].mean()
    assert abs(out["label"].mean() - 0.5) < 0.05
    assert (out.groupby("race").size() == out.groupby("race").size().iloc[0]).all()
    assert len(out) <= 2 * lab
    assert (bal_share.between(0.35, 0.65)).all()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["0|W", "1|W", "0|A", "1|A", "1|B"]), min_size=1, max_size=400),
    st.integers(0, 10_000),
)
def test_split_by_case_properties(strata, seed):
    sp = M.split_by_case(strata, seed=seed)
    n = len(strata)
    counts = {s: int((sp == s).sum()) for s in M.BENCHMARK_SPLITS}
    assert counts == {
        "train": int(np.floor(0.8 * n + 1e-9)),
        "val": int(np.floor(0.05 * n + 1e-9)),
        "test": n - int(np.floor(0.8 * n + 1e-9)) - int(np.floor(0.05 * n + 1e-9)),
    }
    s = pd.Series(strata)
    for h, idx in s.groupby(
        s
    ).groups.items():  # stratified: each stratum's test share within one case
        k = (sp[list(idx)] == "test").sum()
        assert abs(k - len(idx) * counts["test"] / n) < 1 + 1e-9
    assert (M.split_by_case(strata, seed=seed) == sp).all()


def test_split_bad_fractions():
    with pytest.raises(FairlibInputError, match="summing to 1"):
        M.split_by_case(["a", "b"], fractions=(0.8, 0.1, 0.2))


def test_helpers_against_hand_oracles():
    assert M.map_race(["WHITE - BRAZILIAN", "PORTUGUESE", "MULTIPLE RACE/ETHNICITY"]).fillna(
        "-"
    ).tolist() == [
        "White",
        "-",
        "-",
    ]
    assert M.is_gender_specific_icd(
        ["O80", "N40.1", "N390", "618.1", "4280"], [10, 10, 10, 9, 9]
    ).tolist() == [
        True,
        True,
        False,
        True,
        False,
    ]
    assert (
        M.redact_opioids("oxycodone-acetaminophen and MS Contin; naloxone")
        == "___-acetaminophen and ___; naloxone"
    )
    assert M.neutralize_demographics("He told his wife") == "The patient told their spouse"
    s = M.note_sections(
        "Chief Complaint:\nX\nHistory of Present Illness: inline text\nPast Medical History:\n- a\n"
    )
    assert (s["chief_complaint"], s["hpi"], s["pmh"]) == ("X", "inline text", "- a")


# ---------------------------------------------------------------- the authors' cohort rules (rules="paper")
def test_paper_opioid_labels_exact_names_and_drop_unknown(op_twin):
    """Oracle from the raw prescriptions: Yes iff a lower-cased, stripped drug string equals a listed opioid name;
    'unknown' (a string only contains one) is dropped; the last admission per subject is kept."""
    dx = op_twin["hosp/diagnoses_icd"][["icd_code", "icd_version"]].drop_duplicates()
    titled = {
        **op_twin,
        "hosp/d_icd_diagnoses": dx.assign(long_title="title of " + dx["icd_code"].astype(str)),
    }
    b = M.build_opioid(
        titled, seed=0, rules="paper", **RAW
    )  # the paper rules also read the ICD titles
    rx = op_twin["hosp/prescriptions"]
    names = set(M.OPIOIDS)
    by = (
        rx.assign(d=rx["drug"].astype(str).str.lower().str.strip())
        .groupby("hadm_id")["d"]
        .apply(list)
        .to_dict()
    )
    for h, y in zip(b.cases["hadm_id"], b.cases["label"]):
        ds = by.get(h, [])
        exact = any(d in names for d in ds)
        contains = any(OPIOID_WORDS.search(d) for d in ds)
        assert not (contains and not exact) or y == 1 and exact, h  # never an 'unknown' admission
        assert y == int(exact)
    steps = b.flow.set_index("step")["excluded"]
    assert steps["opioid status unknown (a drug string contains but is not an opioid name)"] > 0
    adm = op_twin["hosp/admissions"].set_index("hadm_id")
    fair = M.build_opioid(op_twin, seed=0, **RAW)
    assert b.params["rules"] == "paper" and fair.params["rules"] == "fairlib"
    # last vs first admission per subject: where a subject has several admissions, the kept one differs
    both = set(b.cases.subject_id) & set(fair.cases.subject_id)
    later = [
        s
        for s in both
        if adm.loc[b.cases.set_index("subject_id").loc[s, "hadm_id"], "admittime"]
        >= adm.loc[fair.cases.set_index("subject_id").loc[s, "hadm_id"], "admittime"]
    ]
    assert len(later) == len(both)


def test_paper_ed_rules_keep_implausible_but_present_vitals(ed_twin):
    paper = M.build_ed_triage(ed_twin, seed=0, rules="paper", **RAW)
    fair = M.build_ed_triage(ed_twin, seed=0, **RAW)
    vit = paper.cases[list(M.VITALS)]
    assert vit.notna().all().all() and paper.cases["pain"].fillna("").str.len().gt(0).all()
    out_of_range = np.zeros(len(vit), bool)
    for v, (lo, hi) in M.VITAL_RANGES.items():
        out_of_range |= ~vit[v].between(lo, hi).to_numpy()
    assert out_of_range.any()  # the authors kept implausible values
    assert len(paper.cases) != len(fair.cases)  # the two rule sets select different stays
    with pytest.raises(FairlibInputError, match="rules"):
        M.build_ed_triage(ed_twin, rules="theirs")
    with pytest.raises(FairlibInputError, match="rules"):
        M.load_benchmark("ed_triage", source="synthetic", rules="x")
