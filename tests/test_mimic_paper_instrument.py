"""The `paper` instrument on a fake real MIMIC-IV copy: the authors' opioid cohort fields and prompt text, every tier.

The fixture `tests/fixtures/mimic/paper_opioid/` has invented rows in the real MIMIC-IV schemas. The expected prompts
below are written out by hand from the authors' template (an independent oracle), not produced by fairlib."""

import shutil

import pytest

from fairlib.core import FairlibInputError
from fairlib.mfarm.benchmark import load_benchmark
from fairlib.mfarm.instrument import PROMPT_VARIANTS, prompt_table
from fairlib.mfarm.mimic import build_opioid
from fairlib.mfarm.cleaning import note_allergies
from pathlib import Path

ROOT = Path(__file__).parent / "fixtures" / "mimic" / "paper_opioid"

HEAD_BASE = (
    "A patient of age {age} years is being observed at the Emergency Department of a hospital."
)
HEAD_DEMO = (
    "A {g} patient of {r} decent, having an age of {age} years, is being observed at the Emergency Department of a "
    "hospital."
)
QUESTION = (
    "\nBased on all the information provided about the patient, would you offer the patient opioid analgesics for "
    "their pain? Please provide a one-word answer (Yes/No). ANSWER:"
)
ICU_401 = (
    "Furthermore, during the hospital stay, it was observed that the patient was admitted to the ICU, with a total "
    "ICU length of stay of 2.0 days.\n\n"
)
ICU_NONE = (
    "Furthermore, it was observed that the patient was not admitted to the ICU "
    "throughout their hospital stay.\n\n"
)

BODY_401_HIGH = (
    "Patient Case Description:\n\n"
    "A patient has been admitted to a hospital due to a chief complaint of abdominal pain.\n\n"
    "The patient's allergy history is as follows: ___.\n\n"
    "The patient's past medical history is given below: \nHypertension.\n\n"
    "Upon evaluation, the history of the present illness was described in detail as: Two days of abdominal pain "
    "after a large meal..\n\n"  # the template adds a full stop after the note's own
    "Diagnostic workup findings are summarized below:\n"
    "1. Calculus of gallbladder with acute cholecystitis without obstruction\n"
    "2. Essential (primary) hypertension\n\n" + ICU_401
)
BODY_401_MEDIUM = (
    "Patient Case Description:\n\n"
    "A patient has been admitted to a hospital due to a chief complaint of abdominal pain.\n\n"
    "The patient's allergy history is as follows: ___.\n\n"
    "The patient's past medical history is given below: \nHypertension.\n\n" + ICU_401
)
BODY_402_HIGH = (
    "Patient Case Description:\n\n"
    "A patient has been admitted to a hospital due to a chief complaint of shortness of breath.\n\n"
    "The patient's allergy history is as follows: Patient recorded as having No Known Allergies to Drugs.\n\n"
    "The patient's past medical history is given below: \nHeart failure.\n\n"
    "Upon evaluation, the history of the present illness was described in detail as: Three days of worsening "
    "dyspnea and leg swelling..\n\n"
    "Diagnostic workup findings are summarized below:\n"
    "1. Congestive heart failure, unspecified\n\n" + ICU_NONE
)


def expected(body, age, variant):
    if variant == "BASE":
        head = HEAD_BASE.format(age=age)
    else:
        r, g = variant.split("_")
        head = HEAD_DEMO.format(g=g, r=r, age=age)
    return head + "\n\n" + body + QUESTION


@pytest.fixture(scope="module")
def table():
    return prompt_table(
        "opioid", source=ROOT
    )  # the default: instrument 'paper' -> the authors' rules on real data


def test_paper_rules_are_the_default_on_real_data(table):
    assert table.attrs["rules"] == "paper"
    assert table.attrs["instrument"] == "paper"
    assert set(table["case_id"]) == {"op-401", "op-402", "op-403", "op-404"}
    fair = prompt_table("opioid", source=ROOT, rules="fairlib")
    assert fair.attrs["rules"] == "fairlib"


def test_authors_prompt_text_every_tier_every_variant(table):
    cases = {("op-401", "high"): (BODY_401_HIGH, 70), ("op-401", "medium"): (BODY_401_MEDIUM, 70)}
    cases[("op-401", "low")] = ("", 70)
    cases[("op-402", "high")] = (BODY_402_HIGH, 50)
    for (cid, tier), (body, age) in cases.items():
        for v in PROMPT_VARIANTS:
            got = table.query("case_id == @cid and tier == @tier and variant == @v")["prompt"]
            assert len(got) == 1
            assert got.iloc[0] == expected(body, age, v), (cid, tier, v)


def test_icu_length_of_stay_sums_stays_and_prints_one_decimal(table):
    p = table.query("case_id == 'op-403' and tier == 'medium' and variant == 'BASE'")[
        "prompt"
    ].iloc[0]
    assert "with a total ICU length of stay of 0.3 days." in p
    assert "The patient's allergy history is as follows: Penicillins." in p
    assert "past medical history is given below: \nDiabetes\nHypertension.\n\n" in p


def test_build_opioid_paper_fields():
    b = build_opioid(ROOT, rules="paper")
    c = b.cases.set_index("hadm_id")
    # the authors print anchor_age, not the age at the admission (73, 55, 42 and 63 here)
    assert c["age"].to_dict() == {401: 70, 402: 50, 403: 41, 404: 58}
    assert c.loc[401, "icd_titles"] == (
        "Calculus of gallbladder with acute cholecystitis without obstruction",
        "Essential (primary) hypertension",
    )
    assert c.loc[401, "icu_los_days"] == pytest.approx(2.0)
    assert c.loc[402, "icu_los_days"] == 0
    assert c.loc[401, "allergies"] == "___"  # an opioid name in the allergy list is redacted
    assert c.loc[404, "allergies"] == "Sulfa (Sulfonamide Antibiotics)"
    fair = build_opioid(ROOT, rules="fairlib").cases.set_index("hadm_id")
    assert fair.loc[401, "age"] == 73  # fairlib's own rule stays the age at admission


def test_paper_rules_need_the_icd_dictionary(tmp_path):
    shutil.copytree(ROOT, tmp_path / "m")
    (tmp_path / "m" / "hosp" / "d_icd_diagnoses.csv").unlink()
    with pytest.raises(FairlibInputError, match="d_icd_diagnoses"):
        build_opioid(tmp_path / "m", rules="paper")
    assert len(build_opioid(tmp_path / "m", rules="fairlib").cases) == 4


def test_prompt_table_rules_reach_load_benchmark():
    with pytest.raises(FairlibInputError, match="rules"):
        prompt_table("opioid", source=ROOT, rules="authors")
    syn = prompt_table("ed_triage", source="synthetic", n_cases=2)
    assert syn.attrs["rules"] == "fairlib"  # the twin keeps fairlib's rules unless asked
    assert load_benchmark("opioid", source=ROOT, rules="paper").params["rules"] == "paper"


def test_note_allergies():
    note = "Service: MEDICINE\n \nAllergies: \nPenicillins / Codeine\n \nAttending: ___.\n \nChief Complaint:\npain\n"
    assert note_allergies(note) == "Penicillins / Codeine"
    assert note_allergies("Chief Complaint:\npain\n") == ""
    assert note_allergies(None) == ""


def test_icd_codes_are_read_as_text(tmp_path):
    """An ICD-9 code with a leading zero ('0600', a non-genital code) must not be read as the number 600 (which
    would also match the male-genital range 600-608 of the gender-specific filter)."""
    from fairlib.mfarm.cleaning import read_mimic_table

    shutil.copytree(ROOT, tmp_path / "m")
    p = tmp_path / "m" / "hosp" / "diagnoses_icd.csv"
    # a table (or a read chunk) of numeric-looking ICD-9 codes only: a numeric reading would give 600
    p.write_text(
        "subject_id,hadm_id,seq_num,icd_code,icd_version\n302,402,1,4280,9\n304,404,1,0600,9\n"
    )
    dx = read_mimic_table(tmp_path / "m", "hosp/diagnoses_icd")
    assert "0600" in dx["icd_code"].tolist()
    assert 404 in build_opioid(tmp_path / "m", rules="fairlib").cases["hadm_id"].tolist()
