"""Issue 24: an attacker who reads the published tables tries to get back a hidden count of 1..10.

The attack is written here, independently of `fairlib.report`: it reads the written CSV files as text and tries

* every count shown directly (columns of counts by name or by content: non-negative integral numbers);
* rate x support: a rate (or %) times the count of its row gives the numerator, when the published precision
  pins it down;
* every subtraction: block totals (a complete block of the same column gives the total) minus the shown cells of
  a block with hidden cells, for counts and for the numerators of rates; differences of block totals; differences
  of two shown counts of the same column in different blocks (overlapping groupings);
* exclusion flows: remaining[i-1] - excluded[i] = remaining[i];
* gaps: a gap column (max - min of the block's rates) that exceeds the range of the shown rates gives back the
  rate of a hidden group; that rate alone is a finding, and its denominator (smallest fraction) gives a count by
  subtraction.

The fast tests build Table 3 of the fake "real" Texas-100X file (tests/fixtures/fake_real) with the library calls
the paper notebook makes; the slow test runs the VFR cohort and mFARM benchmark notebooks on the fake real files (as
tests/test_fake_real_run.py does) and attacks every CSV they write.
"""

import os
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

FAKE = Path(__file__).resolve().parent / "fixtures" / "fake_real"
SMALL = lambda v: v == v and 0 < round(v) < 11 and abs(v - round(v)) < 1e-6
HIDDEN = re.compile(r"^\s*(|nan|<NA>|<\d+|suppressed)\s*$", re.I)
RATE = re.compile(
    r"(^|_)(rate|pos_rate|prevalence|share|proportion|fraction|pct|percent)(_|$)|%", re.I
)
GAP = re.compile(r"(^|_)(brg|gap)(_|$)", re.I)
NOT_COUNT = re.compile(
    r"(^|_)(fold|seed|rank|order|year|step|k|id|code|index|level|round|digits|bins?)(_|$)", re.I
)


def _num(s: pd.Series) -> pd.Series:
    return pd.to_numeric(
        s.astype(str).str.replace(",", "", regex=False).str.strip(), errors="coerce"
    )


def _decimals(x: str) -> int:
    x = x.strip()
    return (
        len(x.split(".")[1])
        if "." in x and "e" not in x.lower()
        else (17 if "e" in x.lower() else 0)
    )


def attack(df: pd.DataFrame, where: str = "") -> list:
    """Every count of 1..10 the attacker gets from one table (strings, as read from the CSV)."""
    found = []
    leak = lambda kind, col, v: (
        found.append((where, kind, str(col), int(round(v)))) if SMALL(v) else None
    )
    num = {c: _num(df[c]) for c in df.columns}
    hid = {c: df[c].astype(str).str.match(HIDDEN.pattern, case=False) for c in df.columns}
    numeric = [c for c in df.columns if num[c].notna().any() and (num[c].notna() | hid[c]).all()]
    counts = [
        c
        for c in numeric
        if not RATE.search(str(c))
        and not GAP.search(str(c))
        and not NOT_COUNT.search(str(c))
        and ((v := num[c].dropna()) >= 0).all()
        and (v == v.round()).all()
    ]
    rates = [c for c in numeric if RATE.search(str(c)) and c not in counts]
    labels = [c for c in df.columns if c not in numeric and df[c].nunique() < len(df)]
    for c in counts:  # shown directly
        for v in num[c].dropna():
            leak("shown", c, v)
    # rate x support, per row: the numerator and its complement
    numer = {}
    for r in rates:
        scale = (
            100.0
            if (num[r].dropna() > 1).any() or re.search(r"pct|percent|%", str(r), re.I)
            else 1.0
        )
        for n in counts:
            k = []
            for i in range(len(df)):
                rv, nv = num[r].iloc[i], num[n].iloc[i]
                if rv != rv or nv != nv:
                    k.append(np.nan)
                    continue
                err = 0.5 * 10.0 ** -_decimals(str(df[r].iloc[i])) / scale * nv
                kv = rv / scale * nv
                if err < 0.5 and abs(kv - round(kv)) <= err + 1e-9:
                    leak("rate x support", f"{r} x {n}", round(kv))
                    leak("rate x support (complement)", f"{r} x {n}", nv - round(kv))
                    k.append(float(round(kv)))
                else:
                    k.append(np.nan)
            numer[f"{r} x {n}"] = pd.Series(k, index=df.index)
    cols = {str(c).lower(): c for c in df.columns}
    flow = "excluded" in cols and "remaining" in cols
    # every subtraction over the blocks of each label column (the steps of a flow are not parts of a whole)
    for g in [] if flow else labels:
        blocks = list(df.groupby(g, sort=False).indices.values())
        if len(blocks) < 2:
            continue
        for c, vals in [*((c, num[c]) for c in counts), *numer.items()]:
            gone = vals.isna().to_numpy()
            complete = [vals.iloc[b].sum() for b in blocks if not gone[b].any()]
            for t1 in complete:
                for t2 in complete:
                    leak("difference of block totals", f"{c} by {g}", t1 - t2)
            if not complete:
                continue
            total = max(complete)
            for b in blocks:
                if gone[b].any():
                    leak("block total minus shown cells", f"{c} by {g}", total - vals.iloc[b].sum())
            for i, bi in enumerate(blocks):
                for bj in blocks[i + 1 :]:
                    for a in vals.iloc[bi].dropna():
                        for b_ in vals.iloc[bj].dropna():
                            leak("difference of cells of two blocks", f"{c} by {g}", abs(a - b_))
        # gaps: the gap of a block that exceeds the range of its shown rates gives back a hidden rate
        for gap in (c for c in numeric if GAP.search(str(c))):
            for r in rates:
                for b in blocks:
                    gv, rv = num[gap].iloc[b].dropna(), num[r].iloc[b].dropna()
                    if not len(gv) or len(rv) == len(b) or not len(rv):
                        continue
                    tol = 10.0 ** -min(
                        _decimals(str(x)) for x in df[r].iloc[b][num[r].iloc[b].notna()]
                    )
                    tol += 10.0 ** -min(
                        _decimals(str(x)) for x in df[gap].iloc[b][num[gap].iloc[b].notna()]
                    )
                    if gv.iloc[0] - (rv.max() - rv.min()) > tol:
                        found.append(
                            (where, "gap gives back a hidden rate", f"{gap} / {r} @ {g}", -1)
                        )
                        hidden_rate = (
                            rv.max() - gv.iloc[0]
                            if rv.max() - gv.iloc[0] >= 0
                            else rv.min() + gv.iloc[0]
                        )
                        for n in counts:
                            nb = num[n].iloc[b]
                            shown_total = [
                                num[n].iloc[bb].sum()
                                for bb in blocks
                                if not num[n].iloc[bb].isna().any()
                            ]
                            if not shown_total:
                                continue
                            rest = max(shown_total) - nb.sum()
                            if rest < 1:
                                continue
                            m = Fraction(hidden_rate).limit_denominator(int(rest)).denominator
                            leak(
                                "gap, then the rate's denominator, then subtraction",
                                f"{n} @ {g}",
                                rest - m,
                            )
    # exclusion flows: remaining[a] - remaining[z] = excluded[a+1] + ... + excluded[z], over every span
    if flow:
        e, r = num[cols["excluded"]], num[cols["remaining"]]
        blocks = (
            df.groupby(cols["task"], sort=False).indices.values()
            if "task" in cols
            else [np.arange(len(df))]
        )
        for b in blocks:
            for a, i in zip(b[:-1], b[1:]):
                leak("flow: remaining before - remaining", "excluded", r.iloc[a] - r.iloc[i])
                leak("flow: remaining before - excluded", "remaining", r.iloc[a] - e.iloc[i])
                leak("flow: excluded + remaining", "remaining before", e.iloc[i] + r.iloc[i])
            for x, a in enumerate(b):
                for z in b[x + 2 :]:
                    span = e.iloc[a + 1 : z + 1]
                    leak(
                        "flow: hidden exclusions of a span",
                        f"rows {a}..{z}",
                        r.iloc[a] - r.iloc[z] - span.sum(),
                    )
    return found


def attack_csv(path: Path, where: str = "") -> list:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df = df.drop(columns=[c for c in ("suppressed", "note") if c in df.columns])
    return sorted(set(attack(df, where or path.name)))


# --- the attack must work: it finds the leaks the issue reports ---------------------------------------------


def test_attack_finds_the_issue_24_table3_leak(tmp_path):
    """The Table 3 the issue shows (full-precision BRG over a complementarily hidden group) is broken open."""
    t = pd.DataFrame(
        {
            "attribute": ["race"] * 5 + ["sex"] * 2,
            "group": ["White", "Other", "Black", "Asian", "AmInd", "F", "M"],
            "n": ["3870.0", "1220.0", "786.0", "", "", "3751.0", "2249.0"],
            "pos_rate": [
                "0.45503875968992247",
                "0.40491803278688526",
                "0.5025445292620865",
                "",
                "",
                "0.41",
                "0.51",
            ],
            "brg": ["0.1460227901316517"] * 5 + ["0.1"] * 2,
        }
    )
    t.to_csv(tmp_path / "t.csv", index=False)
    found = attack_csv(tmp_path / "t.csv")
    assert any(k == "gap gives back a hidden rate" for _, k, _, _ in found), found
    assert any(v == 9 for *_, v in found), found  # 6000 - 3870 - 1220 - 786 - 115 = 9


def test_attack_finds_positives_from_a_rate():
    t = pd.DataFrame({"group": ["a", "b"], "n": ["40", "400"], "rate": ["0.100", "0.500"]})
    assert ("", "rate x support", "rate x n", 4) in attack(t)


# --- Table 3 of the fake real Texas-100X file, as the VFR cohort notebook writes it --------------------------


@pytest.fixture(scope="module")
def fake_real_cohort():
    from fairlib.vfr.cohort import load_cohort

    return load_cohort(str(FAKE / "texas100x.csv"))


def _write_table3(cohort, source, fig_dir):
    """The calls of nbs/papers/vfr/01_cohort.ipynb (Table 3, its side-by-side and the age groupings) on real data."""
    from fairlib.report import save_table
    from fairlib.vfr.cohort import cohort_table, paper_table3

    t3 = cohort_table(cohort, suppress_below=11)
    save_table(
        t3,
        "table3_cohort",
        fig_dir=fig_dir,
        source=source,
        real=True,
        count_columns=["n"],
        groups=["attribute"],
        derived_columns={"pct": "n", "pos_rate": "n"},
    )
    pub = paper_table3()
    pub["group"] = np.where(
        pub["attribute"] == "age_bucket",
        pub["label_printed"].str.split(" \\(").str[0],
        pub["label_corrected"],
    )
    side = pub.merge(
        t3[["attribute", "group", "n", "pct", "pos_rate"]],
        on=["attribute", "group"],
        how="left",
        suffixes=("_published", "_cohort"),
    )
    side = side[
        [
            "attribute",
            "label_printed",
            "group",
            "n_published",
            "n_cohort",
            "pct_published",
            "pct_cohort",
            "pos_rate_published",
            "pos_rate_cohort",
        ]
    ].rename(columns={"label_printed": "published label", "group": "counts (corrected label)"})
    save_table(
        side,
        "table3_published_vs_cohort",
        fig_dir=fig_dir,
        real=True,
        count_columns=["n_cohort"],
        groups=["attribute"],
        derived_columns={"pct_cohort": "n_cohort", "pos_rate_cohort": "n_cohort"},
        source=source,
    )
    ages = cohort_table(cohort, attributes=("age_bucket", "age_bucket_paper"), suppress_below=11)
    ages["grouping"] = ages["attribute"].map(
        {"age_bucket": "corrected", "age_bucket_paper": "paper's code"}
    )
    save_table(
        ages.drop(columns="attribute"),
        "table3_age_groupings",
        fig_dir=fig_dir,
        source=source,
        real=True,
        count_columns=["n"],
        groups=["grouping"],
        derived_columns={"pct": "n", "pos_rate": "n"},
    )
    return t3


def test_fake_real_table3_gives_back_no_small_count(fake_real_cohort, tmp_path):
    cohort, source = fake_real_cohort
    assert (cohort["race"].value_counts() < 11).any()  # the fixture has a small group to protect
    _write_table3(cohort, source, tmp_path)
    found = [f for p in sorted(tmp_path.glob("*.csv")) for f in attack_csv(p)]
    assert not found, "\n".join(map(str, found))


def test_fake_real_table3_is_flagged_by_the_scanner_when_the_gap_leaks(fake_real_cohort, tmp_path):
    """`scan_for_small_cells` checks derived columns: a full-precision gap over a hidden group is a finding."""
    from fairlib.report import scan_for_small_cells

    cohort, _ = fake_real_cohort
    t = cohort.groupby("race", observed=True)["los_gt3"].agg(["size", "mean"]).reset_index()
    keep = (
        t["size"] > 200
    )  # two groups hidden (one small, one complementary): the gap still spans all of them
    out = pd.DataFrame(
        {
            "attribute": "race",
            "group": t["race"],
            "n": t["size"].where(keep),
            "pos_rate": t["mean"].where(keep),
            "brg": t["mean"].max() - t["mean"].min(),
        }
    )
    sex = cohort.groupby("sex", observed=True)["los_gt3"].agg(["size", "mean"]).reset_index()
    out = pd.concat(
        [
            out,
            pd.DataFrame(
                {"attribute": "sex", "group": sex["sex"], "n": sex["size"], "pos_rate": sex["mean"]}
            ),
        ]
    )
    out.to_csv(tmp_path / "table3.csv", index=False)
    found = scan_for_small_cells(tmp_path)
    assert len(attack_csv(tmp_path / "table3.csv"))  # the independent attack breaks it ...
    assert len(found) and found["kind"].str.contains("gap|rate").any(), (
        found
    )  # ... and the scanner says so


# --- the fake real run: every CSV the notebooks write ---------------------------------------------------------


@pytest.mark.slow
def test_fake_real_run_outputs_resist_the_attack(tmp_path):
    import papermill as pm
    from fairlib.config import repo_root

    env = {
        "FAIRLIB_TEXAS100X_CSV": str(FAKE / "texas100x.csv"),
        "FAIRLIB_MIMIC_ROOT": str(FAKE / "mimic"),
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        for paper, nb, params in [
            (
                "vfr",
                "nbs/papers/vfr/01_cohort.ipynb",
                dict(source="auto", n=None, seed=0, auroc_n=None, auroc_trees=20),
            ),
            (
                "mfarm",
                "nbs/papers/mfarm/01_benchmarks.ipynb",
                dict(source="auto", seed=0, tokenizer="none"),
            ),
        ]:
            fig, work = tmp_path / paper / "figures", tmp_path / paper / "work"
            fig.mkdir(parents=True)
            work.mkdir()
            pm.execute_notebook(
                str(repo_root() / nb),
                str(tmp_path / paper / Path(nb).name),
                parameters=dict(params, profile="smoke", fig_dir=str(fig), work_dir=str(work)),
                kernel_name="python3",
                language="python",
                cwd=str(repo_root()),
                progress_bar=False,
            )
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    csvs = sorted(tmp_path.rglob("*.csv"))
    assert len(csvs) >= 3, csvs
    found = [f for p in csvs for f in attack_csv(p, str(p.relative_to(tmp_path)))]
    assert not found, "\n".join(map(str, found))
