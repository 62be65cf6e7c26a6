"""Texas-100X cohort: real-file loader (fixtures), codebook decoding, and the synthetic twin's calibration.

Published values are the oracle the twin is calibrated against: the paper's Table 3 (group sizes, LOS>3 rates,
hospital volumes) is read from fairlib/paper_values/vfr.csv; the other numbers below are typed in from the paper
(the VFR-Audit paper, sections 4.1.1-4.2.5) and the authors' race x ethnicity cross-tab.
Tolerances (stated once, here):
  shares ................ +-0.005 absolute
  LOS>3 rates ........... +-max(0.01, 4 binomial SE at the group's size)
  Not-Hispanic in race .. +-max(0.02, 4 SE)
  site-volume shares .... +-0.005; median / quartiles of records per site +-10%
  XGBoost AUROC ......... +-0.03 (100k-record subsample, paper's 80/20 split; paper 0.9528 / 0.8567)
"""

import csv
import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from fairlib.core import FairlibInputError
from fairlib.data import texas as T
from fairlib.published import published_value

FIX = Path(__file__).parent / "fixtures" / "texas"
COLS = [
    "THCIC_ID",
    "SEX_CODE",
    "TYPE_OF_ADMISSION",
    "SOURCE_OF_ADMISSION",
    "LENGTH_OF_STAY",
    "PAT_AGE",
    "PAT_STATUS",
    "RACE",
    "ETHNICITY",
    "TOTAL_CHARGES",
    "ADMITTING_DIAGNOSIS",
    "PRINC_SURG_PROC_CODE",
]


# --- published cohort (paper Table 3 with the corrected labels, the codebook of the VFR methods notes) ------------
def _t3(attribute, row):
    "(N, LOS>3 rate) of one printed Table 3 row, from fairlib/paper_values/vfr.csv."
    return tuple(published_value("vfr", f"table3.{attribute}.{row}.{c}") for c in ("n", "pos_rate"))


RACE = {
    3: ("White", *_t3("race", "white")),
    4: ("Other", *_t3("race", "other_unknown")),
    2: ("Black", *_t3("race", "black")),
    1: ("Asian/Pacific Islander", *_t3("race", "asian_pacific_islander")),
    0: ("American Indian/Eskimo/Aleut", *_t3("race", "american_indian")),
}
# the paper prints the sex and ethnicity rows with swapped labels: its 'Male' row counts SEX_CODE 1 (Female)
SEX = {1: ("Female", *_t3("sex", "male")), 0: ("Male", *_t3("sex", "female"))}
ETH = {
    1: ("Not Hispanic", *_t3("ethnicity", "hispanic")),
    0: ("Hispanic", *_t3("ethnicity", "non_hispanic")),
}
AGE = {
    "Pediatric": _t3("age_bucket", "pediatric"),
    "Young Adult": _t3("age_bucket", "young_adult"),
    "Middle-Aged": _t3("age_bucket", "middle_aged"),
    "Elderly": _t3("age_bucket", "elderly"),
}
NOT_HISP_IN_RACE = {0: 0.338, 1: 0.968, 2: 0.994, 3: 0.831, 4: 0.200}
N = 925_128


def _rate_tol(p, n):
    return max(0.01, 4 * np.sqrt(p * (1 - p) / n))


@pytest.fixture(scope="module")
def twin():
    return T.synthetic_texas100x(seed=0)


# --- loader -----------------------------------------------------------------------------------------------
def test_valid_fixture_matches_plain_csv_reading():
    df = T.load_texas100x(FIX / "valid.csv")
    with open(FIX / "valid.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][1:] == COLS and list(df.columns) == COLS
    assert df.index.name == "record_id" and df.index.tolist() == [int(r[0]) for r in rows[1:]]
    for j, c in enumerate(COLS, start=1):
        want = [float(r[j]) for r in rows[1:]]
        assert np.allclose(df[c].to_numpy(dtype=float), want), c
    assert df["TOTAL_CHARGES"].dtype == np.float64 and df["RACE"].dtype == np.int64
    no_idx = T.load_texas100x(FIX / "valid_no_index.csv")
    assert no_idx.reset_index(drop=True).equals(df.reset_index(drop=True))


@pytest.mark.parametrize(
    "name, pattern",
    [
        ("missing_column.csv", r"missing column\(s\) \['ETHNICITY'\]"),
        ("out_of_range.csv", r"RACE: 1 value\(s\) outside \[0, 4\], e\.g\. \[5\] \(file lines 4\)"),
        (
            "out_of_range.csv",
            r"PAT_AGE: 1 value\(s\) outside \[0, 21\], e\.g\. \[23\] \(file lines 6\).*22-26",
        ),
        (
            "out_of_range.csv",
            r"PRINC_SURG_PROC_CODE: 1 value\(s\) outside \[0, 99\], e\.g\. \[100\]",
        ),
        ("out_of_range.csv", r"\(3 problem\(s\)\)"),
        (
            "non_numeric.csv",
            r"TOTAL_CHARGES: 1 non-numeric value\(s\), e\.g\. \['\$1,200\.00'\] \(file lines 3\)",
        ),
        ("non_numeric.csv", r"SEX_CODE: 1 non-numeric value\(s\), e\.g\. \['F'\] \(file lines 8\)"),
        ("blank_values.csv", r"LENGTH_OF_STAY: 1 blank/missing value\(s\) \(file lines 9\)"),
        ("fractional_codes.csv", r"ETHNICITY: 1 non-integer value\(s\), e\.g\. \[0\.5\]"),
        ("header_only.csv", r"header but no records"),
        ("empty.csv", r"is empty \(0 bytes\)"),
        ("lowercase_header.csv", r"'thcic_id' looks like THCIC_ID.*case- and space-sensitive"),
        ("unreadable.csv", r"is not a readable CSV"),
        ("does_not_exist.csv", r"file not found"),
    ],
)
def test_broken_fixtures_raise_clear_errors(name, pattern):
    with pytest.raises(FairlibInputError, match=pattern) as ei:
        T.load_texas100x(FIX / name)
    e = ei.value
    assert isinstance(e, ValueError) and e.argument == "path" and e.func == "load_texas100x"
    assert e.__cause__ is None  # never a chained pandas traceback


def test_loader_rejects_directory_and_unset_path(tmp_path):
    with pytest.raises(FairlibInputError, match="is a directory"):
        T.load_texas100x(tmp_path)
    with pytest.raises(FairlibInputError, match="texas100x_csv"):
        T.load_texas100x(None)


def test_twin_round_trips_through_the_processing_script_format(tmp_path):
    df = T.synthetic_texas100x(3_000, seed=4)
    df.to_csv(tmp_path / "texas_100x.csv")  # what process_texas.py does: df.to_csv(path)
    back = T.load_texas100x(tmp_path / "texas_100x.csv")
    pd.testing.assert_frame_equal(back.reset_index(drop=True), df, check_exact=False, rtol=1e-12)


def test_validate_rejects_non_frames_and_names_the_argument():
    with pytest.raises(FairlibInputError, match="must be a pandas DataFrame") as ei:
        T.prepare_cohort([[1, 2]])
    assert ei.value.argument == "raw"


# --- codebook / decoding ----------------------------------------------------------------------------------
def test_decoding_follows_the_rank_codebook():
    raw = T.synthetic_texas100x(4_000, seed=8)
    c = T.prepare_cohort(raw)
    race = {
        0: "American Indian/Eskimo/Aleut",
        1: "Asian/Pacific Islander",
        2: "Black",
        3: "White",
        4: "Other",
    }
    assert (c["race"] == raw["RACE"].map(race)).all()
    assert (c["sex"] == raw["SEX_CODE"].map({0: "Male", 1: "Female"})).all()
    assert (c["ethnicity"] == raw["ETHNICITY"].map({0: "Hispanic", 1: "Not Hispanic"})).all()
    age = np.select(
        [raw.PAT_AGE <= 5, raw.PAT_AGE <= 10, raw.PAT_AGE <= 15],
        ["Pediatric", "Young Adult", "Middle-Aged"],
        "Elderly",
    )
    assert (c["age_bucket"].to_numpy() == age).all()
    assert (c["los_gt3"] == (raw["LENGTH_OF_STAY"] > 3).astype(int)).all() and c[
        "los_gt3"
    ].dtype.kind == "i"
    for a in T.PROTECTED_ATTRIBUTES:
        assert pd.api.types.is_string_dtype(c[a]), a


def test_feature_lists_exclude_target_and_protected_columns():
    assert set(T.END_OF_ENCOUNTER) == {"TOTAL_CHARGES", "PAT_STATUS"}
    assert set(T.FULL_FEATURES) - set(T.ADMISSION_LEAN_FEATURES) == set(T.END_OF_ENCOUNTER)
    assert not {"LENGTH_OF_STAY", "RACE", "SEX_CODE", "ETHNICITY"} & set(T.FULL_FEATURES)
    assert set(T.FULL_FEATURES) <= set(COLS)


def test_paper_table3_swaps_are_recorded():
    t = T.paper_table3().set_index("label_printed")
    assert (
        t.loc["Hispanic", "label_corrected"] == "Not Hispanic"
        and t.loc["Hispanic", "n"] == ETH[1][1]
    )
    assert t.loc["Male", "label_corrected"] == "Female" and t.loc["Male", "n"] == SEX[1][1]


# --- the twin: determinism ----------------------------------------------------------------------------------
def _digest(df):
    return hashlib.sha256(
        pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes()
    ).hexdigest()


def test_twin_is_bit_identical_per_seed_and_differs_across_seeds(twin):
    again = T.synthetic_texas100x(seed=0)
    assert _digest(again) == _digest(twin) and again.equals(twin)
    other = T.synthetic_texas100x(seed=1)
    assert not other.equals(twin)
    assert (other["LENGTH_OF_STAY"].to_numpy() != twin["LENGTH_OF_STAY"].to_numpy()).mean() > 0.3
    g = np.random.default_rng(7)
    assert T.synthetic_texas100x(1_000, seed=g).shape == (1_000, 12)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 3_000), seed=st.integers(0, 2**32 - 1))
def test_twin_always_fits_the_real_schema(n, seed):
    df = T.synthetic_texas100x(n, seed=seed)
    assert len(df) == n and list(df.columns) == COLS
    T.validate_texas100x(df)  # the real-file validator accepts every twin


def test_twin_rejects_bad_sizes():
    for bad in (0, -5, 2.5, True, "10"):
        with pytest.raises(FairlibInputError, match="positive integer"):
            T.synthetic_texas100x(bad)


# --- the twin: calibration against the published cohort -----------------------------------------------------
def test_twin_group_shares_and_rates_match_table3(twin):
    y = (twin["LENGTH_OF_STAY"] > 3).to_numpy()
    assert len(twin) == N and abs(y.mean() - 0.450) <= 0.005
    for col, spec in (("RACE", RACE), ("SEX_CODE", SEX), ("ETHNICITY", ETH)):
        for code, (label, n_pub, rate) in spec.items():
            m = (twin[col] == code).to_numpy()
            assert abs(m.mean() - n_pub / N) <= 0.005, (label, m.mean())
            assert abs(y[m].mean() - rate) <= _rate_tol(rate, m.sum()), (label, y[m].mean())
    bucket = pd.cut(twin["PAT_AGE"], [-1, 5, 10, 15, 21], labels=list(AGE)).astype(str).to_numpy()
    for label, (n_pub, rate) in AGE.items():
        m = bucket == label
        assert abs(m.mean() - n_pub / N) <= 0.005, label
        assert abs(y[m].mean() - rate) <= _rate_tol(rate, m.sum()), (label, y[m].mean())
    # rates rise steeply with age among adults
    r = [y[bucket == k].mean() for k in ("Young Adult", "Middle-Aged", "Elderly")]
    assert r[0] < r[1] < r[2] and r[2] / r[0] > 2.5


def test_twin_joint_structure(twin):
    y = (twin["LENGTH_OF_STAY"] > 3).to_numpy()
    for code, share in NOT_HISP_IN_RACE.items():
        m = (twin["RACE"] == code).to_numpy()
        tol = max(0.02, 4 * np.sqrt(share * (1 - share) / m.sum()))
        assert abs((twin.loc[m, "ETHNICITY"] == 1).mean() - share) <= tol, code
    # female share driven by short obstetric-age stays: young-adult women stay > 3 days far less often than men
    ya = twin["PAT_AGE"].between(6, 10).to_numpy()
    f, m = ya & (twin["SEX_CODE"] == 1).to_numpy(), ya & (twin["SEX_CODE"] == 0).to_numpy()
    assert f.sum() > 2 * m.sum() and y[f].mean() < y[m].mean() - 0.15


def test_twin_hospital_volumes(twin):
    vc = np.sort(twin["THCIC_ID"].value_counts().to_numpy())[::-1]
    assert len(vc) == 441 and (twin["THCIC_ID"] == 999999).any()
    for k in (10, 50, 100, 200):  # Table 3's share of records in the k largest sites (percent)
        share = published_value("vfr", f"table3.hospital_volume.top{k}.pct") / 100
        assert abs(vc[:k].sum() / N - share) <= 0.005, k
    for q, want in ((0.25, 172), (0.5, 686), (0.75, 3_195)):
        assert abs(np.quantile(vc, q) - want) <= 0.1 * want, q
    # hospital-level variation: site LOS>3 rates spread, so hospital folds differ
    rate = twin.groupby("THCIC_ID")["LENGTH_OF_STAY"].agg(lambda s: (s > 3).mean())
    big = rate[twin["THCIC_ID"].value_counts().reindex(rate.index) >= 1_000]
    assert big.std() >= 0.05


def test_twin_predicts_los_like_the_paper(twin):
    cohort = T.prepare_cohort(twin)
    res = T.twin_auroc_check(cohort, n=100_000, seed=0, n_estimators=200)
    assert abs(res["full"] - 0.9528) <= 0.03, res
    assert abs(res["admission_lean"] - 0.8567) <= 0.03, res
    assert res["full"] - res["admission_lean"] > 0.05


def test_twin_calibration_table_agrees_with_independent_counts(twin):
    cohort = T.prepare_cohort(twin)
    cal = T.twin_calibration(cohort).set_index("target")
    assert cal["within"].all(), cal.loc[~cal["within"]].to_dict()
    assert cal.loc["race=Black: share", "achieved"] == pytest.approx((twin["RACE"] == 2).mean())
    assert cal.loc["sex=Female: LOS>3 rate", "achieved"] == pytest.approx(
        (twin.loc[twin.SEX_CODE == 1, "LENGTH_OF_STAY"] > 3).mean()
    )


# --- cohort selection and summaries -------------------------------------------------------------------------
def test_load_cohort_auto_follows_the_site_setting(monkeypatch):
    monkeypatch.setenv("FAIRLIB_TEXAS100X_CSV", str(FIX / "valid.csv"))
    c, label = T.load_cohort("auto")
    assert label.startswith("REAL Texas-100X (valid.csv") and len(c) == 24
    monkeypatch.setenv("FAIRLIB_TEXAS100X_CSV", "")
    c, label = T.load_cohort("auto", n=500, seed=2)
    assert (
        label == "SYNTHETIC TWIN of Texas-100X (seed 2, n=500) — not real patient data"
        and len(c) == 500
    )
    with pytest.raises(FairlibInputError, match="texas100x_csv"):
        T.load_cohort("real")
    with pytest.raises(FairlibInputError, match="positive integer"):
        T.load_cohort("synthetic", n=0)


def test_cohort_table_matches_brute_force_and_suppresses_small_cells():
    c, _ = T.load_cohort("synthetic", n=3_000, seed=5)
    t = T.cohort_table(c)
    for a in T.PROTECTED_ATTRIBUTES:
        for _, row in t[t.attribute == a].iterrows():
            m = [v == row["group"] for v in c[a]]
            assert row["n"] == sum(m)
            assert row["pos_rate"] == pytest.approx(
                np.mean([yy for yy, k in zip(c["los_gt3"], m) if k])
            )
        sub = t[t.attribute == a]
        assert sub["brg"].iloc[0] == pytest.approx(sub["pos_rate"].max() - sub["pos_rate"].min())
    small = T.cohort_table(c, suppress_below=50)
    ai = small[(small.attribute == "race") & (small.group == "American Indian/Eskimo/Aleut")]
    assert ai["n"].isna().all() and ai["note"].str.contains("suppressed").all()


def test_injected_base_rates_are_what_the_twin_delivers():
    flat = {"Young Adult": 0.45, "Middle-Aged": 0.45, "Elderly": 0.45, "Pediatric": 0.45}
    raw = T.synthetic_texas100x(80_000, seed=3, base_rates={"age_bucket": flat})
    y = raw["LENGTH_OF_STAY"] > 3
    by_age = y.groupby(pd.cut(raw["PAT_AGE"], [-1, 5, 10, 15, 21])).mean()
    assert by_age.max() - by_age.min() < 0.04  # Table 3's 0.4 age gap is gone
    default = T.synthetic_texas100x(80_000, seed=3)
    d = (
        (default["LENGTH_OF_STAY"] > 3)
        .groupby(pd.cut(default["PAT_AGE"], [-1, 5, 10, 15, 21]))
        .mean()
    )
    assert d.max() - d.min() > 0.3
    for bad, msg in (
        ({"colour": {}}, "unknown attribute"),
        ({"sex": {"Male": 1.5}}, r"rates must lie in \(0, 1\)"),
    ):
        with pytest.raises(FairlibInputError, match=msg):
            T.synthetic_texas100x(100, base_rates=bad)


def test_brg_ignores_suppressed_groups():
    c, _ = T.load_cohort("synthetic", n=3_000, seed=5)
    t = T.cohort_table(c, suppress_below=50)
    race = t[t.attribute == "race"]
    shown = race.dropna(subset=["pos_rate"])
    assert race["brg"].iloc[0] == pytest.approx(shown["pos_rate"].max() - shown["pos_rate"].min())


def test_drop_pooled_hospital_counts_what_it_removes(twin):
    kept, removed = T.drop_pooled_hospital(twin)
    assert removed == int((twin["THCIC_ID"] == 999999).sum()) > 0
    assert len(kept) + removed == len(twin) and not (kept["THCIC_ID"] == 999999).any()


def test_codebook_is_package_data():
    "The codebook ships inside the package (works from a wheel): read through importlib.resources, not the checkout."
    import importlib.resources, yaml
    from fairlib.vfr.texas import codebook, CODEBOOK_FILE

    res = importlib.resources.files("fairlib.vfr").joinpath(CODEBOOK_FILE)
    assert res.is_file()
    raw = yaml.safe_load(res.read_text(encoding="utf-8"))
    # codebook() is the file plus the Table 3 numbers (and the other paper_* keys) it adds from paper_values/vfr.csv
    assert {k: codebook()[k] for k in raw if k != "paper_table3"} == {
        k: v for k, v in raw.items() if k != "paper_table3"
    }


def test_age_codes_nan_and_fractions_are_named_errors():
    import numpy as np, pytest
    from fairlib.core import FairlibInputError
    from fairlib.vfr.texas import age_bucket_of

    with pytest.raises(FairlibInputError, match="missing .NaN. age code"):
        age_bucket_of(np.array([3.0, np.nan]))
    with pytest.raises(FairlibInputError, match="whole numbers"):
        age_bucket_of([4.5])
    assert list(age_bucket_of(np.array([0.0, 6.0, 11.0, 21.0]))) == [
        "Pediatric",
        "Young Adult",
        "Middle-Aged",
        "Elderly",
    ]
