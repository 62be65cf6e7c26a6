"""The VFR-Audit reproduction ledger: every published value is claimed by exactly one paper notebook; the rows a
notebook computes from the paper's own printed numbers are consistency checks that agree with the printed values; the
method's settings are restated inputs; on the synthetic twin nothing is counted as recomputed from per-case data."""

import ast
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from fairlib.evidence import consistency_claim, recomputed_claim, twin_claim
from fairlib.ledger import per_case_frame
from fairlib.published import published_values

NBS = Path(__file__).resolve().parents[1] / "nbs" / "papers" / "vfr"
DERIVED = "# ledger: arithmetic on the paper's own printed numbers"


def _cells(nb: Path) -> list[str]:
    return [
        "".join(c["source"])
        for c in json.loads(nb.read_text())["cells"]
        if c["cell_type"] == "code"
    ]


def _claimed(nb: Path) -> list[str]:
    "The id patterns of a notebook's `CLAIMED = [...]` list (empty when it claims nothing)."
    out = []
    for src in _cells(nb):
        m = re.search(r"^CLAIMED = (\[.*?\])$", src, flags=re.M | re.S)
        if m:
            out += ast.literal_eval(m[1])
    return out


def test_every_vfr_value_claimed_by_exactly_one_notebook():
    ids = published_values("vfr")["id"].tolist()
    owners = {i: [] for i in ids}
    for nb in sorted(NBS.glob("*.ipynb")):
        pats = _claimed(nb)
        for i in ids:
            if any(re.match(p, i) for p in pats):
                owners[i].append(nb.stem)
    unclaimed = [i for i, o in owners.items() if not o]
    twice = {i: o for i, o in owners.items() if len(o) > 1}
    assert not unclaimed, f"published VFR values no notebook claims: {unclaimed}"
    assert not twice, f"published VFR values claimed by more than one notebook: {twice}"


def test_claimed_patterns_each_match_something():
    ids = published_values("vfr")["id"].tolist()
    for nb in sorted(NBS.glob("*.ipynb")):
        for p in _claimed(nb):
            assert any(re.match(p, i) for i in ids), (
                f"{nb.stem}: pattern {p!r} matches no published id"
            )


@pytest.mark.parametrize("nb", sorted(NBS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_printed_value_arithmetic_agrees_with_the_printed_values(nb):
    "Arithmetic on the paper's own numbers (a share, a difference, a range) gives its printed value at its precision."
    cells = [s for s in _cells(nb) if s.startswith(DERIVED)]
    for src in cells:
        ns: dict = {}
        exec(compile(src, f"{nb.stem}:derived", "exec"), ns)
        assert ns["derived"], f"{nb.stem}: empty derived table"
        for i, (uses, f, how) in ns["derived"].items():
            r = consistency_claim("vfr", i, uses=list(uses), f=f, how=how, reason=how)
            assert r["status"] == "exact", (
                f"{nb.stem}: {i} = {r['fairlib']!r} ({how}), printed {r['published']}"
            )
            assert r["evidence"] == "consistency of printed values"


def test_worked_statuses_on_a_small_table():
    "A qualitative claim computed from a small Table 7-like frame, on the twin and on the authors' data."
    t7 = pd.DataFrame({"protocol": ["a", "b"], "di_pass": [4, 3]})
    holds = bool(
        (t7.di_pass == 4).all()
    )  # "B4 passes all four DI thresholds" on every protocol: it does not here
    assert holds is False
    r = twin_claim("vfr", "table7.single_split.all_4_di", holds, shape=holds)
    assert (r["status"], r["shape_check"]) == ("method only", "fails")
    r = twin_claim("vfr", "table7.single_split.all_4_di", bool(t7.di_pass.iloc[0] == 4), shape=True)
    assert (r["status"], r["shape_check"]) == ("method only", "holds")
    real = per_case_frame(t7, name="a cohort", what="records")
    assert (
        recomputed_claim("vfr", "table7.single_split.all_4_di", True, data=real, how="x")["status"]
        == "exact"
    )
    assert (
        recomputed_claim(
            "vfr", "table7.single_split.all_4_di", False, data=real, how="x", reason="y"
        )["status"]
        == "differs"
    )
    # B3 -> B4 lowers the mean VFR: a twin's numbers are never compared, only the direction is reported
    s = pd.Series({"B3": 0.09, "B4": 0.12})
    r = twin_claim("vfr", "eq2.b3_vs_b4.B4.mean_vfr", s["B4"], shape=bool(s["B4"] < s["B3"]))
    assert (r["status"], r["shape_check"]) == ("method only", "fails")


LEDGER_IMPORT = "from fairlib.vfr.claims import RERUN, ledger_rows"


def _ledger_notebooks() -> list[Path]:
    return [nb for nb in sorted(NBS.glob("*.ipynb")) if _claimed(nb)]


def test_every_ledger_notebook_writes_its_own_part_with_the_library_rows():
    "The row rules live once, in fairlib.vfr.claims; each notebook writes its own part under its own name."
    for nb in _ledger_notebooks():
        src = [s for s in _cells(nb) if LEDGER_IMPORT in s]
        assert len(src) == 1, f"{nb.stem}: {len(src)} ledger cells"
        assert "def ledger_rows(" not in "".join(_cells(nb)), (
            f"{nb.stem} defines its own ledger_rows"
        )
        assert f'NB = "{nb.stem}"' in src[0], f"{nb.stem}: writes its rows under another name"
        assert "real=REAL" in src[0] and "collect_claims(P, fig_dir=fig_dir)" in src[0], nb.stem


@pytest.mark.parametrize("real", [False, True])
def test_ledger_rows_on_small_inputs(real):
    from fairlib.vfr.claims import ledger_rows

    data = per_case_frame(pd.DataFrame({"x": [1]}), name="a cohort", what="a test cohort")

    def rows(claimed, ours, derived, shapes, **kw):
        return ledger_rows(
            claimed, ours, derived, shapes, real=real, source="a test cohort", data=data, **kw
        )

    k = [r"method\.k_hosp$"]
    r = rows(k, {}, {}, {}, settings={"method.k_hosp": (20, "folds")})[0]
    assert (r["status"], r["evidence"]) == ("exact", "restated input")  # a setting, on any cohort
    r = rows(k, {}, {}, {}, settings={"method.k_hosp": (19, "folds")})[0]
    assert (r["status"], r["reason"]) == (
        "differs",
        "this run's setting differs from the paper's (the profile's parameters)",
    )
    c = [r"cohort\.records$"]
    r = rows(c, {"cohort.records": 925_128}, {}, {"cohort.records": True})[0]
    assert (r["status"], r["evidence"]) == (
        ("exact", "recomputed from per-case data") if real else ("method only", "method on a twin")
    )
    r = rows(c, {"cohort.records": None}, {}, {})[
        0
    ]  # not computed by this run: the command that would
    assert (
        r["status"] == "not reproducible here"
        and "fairlib reproduce" in r["command"]
        and r["reason"]
    )
    d = {"eq5.vfr_stable.lo": (["table7.single_split.vfr_stable"], lambda v: v, "the one protocol")}
    r = rows([r"eq5\.vfr_stable\.lo$"], {}, d, {})[0]
    assert (r["evidence"], r["inputs"]) == (
        "consistency of printed values",
        "the paper's printed values",
    )
    with pytest.raises(ValueError, match="claimed but not computed"):
        rows(k, {}, {}, {})
    with pytest.raises(ValueError, match="computed but not claimed"):
        rows(k, {"method.k_hosp": 20, "method.kappa_min": 0.4}, {}, {})
    with pytest.raises(ValueError, match="computed twice"):
        rows(k, {"method.k_hosp": 20}, {}, {}, settings={"method.k_hosp": (20, "x")})


def test_the_committed_vfr_ledger_counts_no_twin_value_as_recomputed():
    "On the synthetic twin: fairlib's values are method only; what is compared is printed arithmetic or a setting."
    df = pd.read_csv(
        NBS.parents[2] / "figures" / "vfr" / "claims.csv", dtype=str, keep_default_na=False
    ).set_index("claim")
    assert "recomputed from per-case data" not in set(df["evidence"])
    assert set(df.loc[df["status"].isin(["exact", "within tolerance"]), "evidence"]) <= {
        "consistency of printed values",
        "restated input",
    }
    for i in (
        "method.k_hosp",
        "method.k_resamples",
        "method.tau_vfr",
        "cohort.split_seed",
        "thresholds.DI.threshold",
    ):
        assert df.loc[i, "evidence"] == "restated input", i
    assert df.loc["table3.race.white.pct", "evidence"] == "consistency of printed values"


def _derived_rows() -> dict:
    "The consistency rows the VFR notebooks' own arithmetic cells compute, run here on the published table."
    rows = {}
    for nb in sorted(NBS.glob("*.ipynb")):
        for src in (s for s in _cells(nb) if s.startswith(DERIVED)):
            ns: dict = {}
            exec(compile(src, f"{nb.stem}:derived", "exec"), ns)
            for i, (uses, f, how) in ns["derived"].items():
                assert i not in rows, f"{i} computed by two notebooks"
                rows[i] = consistency_claim("vfr", i, uses=list(uses), f=f, how=how)
    return rows


def test_every_agreeing_vfr_row_is_one_the_notebooks_arithmetic_or_settings_produce():
    """Every exact / within-tolerance row of the committed VFR table is a consistency row that the notebooks' own
    arithmetic cells compute here from the published table (same value, same status) or, in the ledger's schema, a
    restated setting; none is recomputed from per-case data or counted from the twin. Works on the table in the
    ledger's schema and on one written before the kinds existed (no `evidence` column), so the check does not wait
    for the paper job."""
    df = pd.read_csv(
        NBS.parents[2] / "figures" / "vfr" / "claims.csv", dtype=str, keep_default_na=False
    )
    df = df.set_index("claim")
    agreeing = df[df["status"].isin(["exact", "within tolerance"])]
    ours = _derived_rows()
    assert ours and all(r["evidence"] == "consistency of printed values" for r in ours.values())
    if "evidence" in df.columns:
        assert set(agreeing["evidence"]) <= {"consistency of printed values", "restated input"}
        consistency = agreeing.index[agreeing["evidence"] == "consistency of printed values"]
        assert set(consistency) == {
            i for i, r in ours.items() if r["status"] in ("exact", "within tolerance")
        }
    else:  # the schema before the kinds: its agreeing rows must be exactly this arithmetic
        assert set(agreeing.index) == set(ours), sorted(set(agreeing.index) ^ set(ours))
        assert set(df.loc[df["status"] == "method only", "inputs"]) <= {"synthetic twin"}
    for i in agreeing.index.intersection(list(ours)):
        assert agreeing.loc[i, "status"] == ours[i]["status"], i
        assert float(agreeing.loc[i, "fairlib"]) == pytest.approx(
            float(ours[i]["fairlib"]), rel=1e-12, abs=0
        ), i
