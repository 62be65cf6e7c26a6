"""The reproduction ledger (issues 25 and 33): every claim carries the kind of evidence its computation is, the status
is computed from fairlib's value and the published one, rows cannot be typed or edited by hand, the scoreboards count
kind x status, and no sentence of the README, the docs, the notebooks or the data READMEs claims more than its kind.

Oracles: the published tables (`fairlib/paper_values/`), decimal rounding of the exact binary value, the arithmetic
of a consistency claim redone here by hand, counts of the committed claims tables taken here with pandas, the SHA-256
of the per-case sources recomputed here from the files and the generator.
"""

import hashlib
import importlib.util
import inspect
import math
import random
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib.evidence import (
    consistency_claim,
    design_claim,
    recomputed_claim,
    restated_claim,
    twin_claim,
    unavailable_claim,
)
from fairlib.ledger import (
    COLUMNS,
    CONSISTENCY,
    DESIGN,
    ESTABLISHED,
    EVIDENCE,
    KIND_INPUTS,
    KIND_STATUSES,
    RECOMPUTED,
    RESTATED,
    STATUSES,
    TWIN,
    UNAVAILABLE,
    _sealed,
    check_claims,
    per_case_file,
    per_case_frame,
    read_claims,
    write_claims,
)
from fairlib.overclaims import overclaims, repository_overclaims
from fairlib.published import PAPERS, published_values
from fairlib.scoreboard import (
    END,
    EVIDENCE_END,
    EVIDENCE_START,
    START,
    claims_markdown,
    collect_claims,
    evidence_markdown,
    format_number,
    headline_count,
    read_block,
    scoreboard,
    scoreboard_markdown,
    tally,
    with_block,
)

ROOT = Path(__file__).resolve().parent.parent
CB = "classification_bias"
TOY = per_case_frame(pd.DataFrame({"y": [0, 1, 1]}), name="toy()", what="three records")
COMPUTED_KINDS = (
    RECOMPUTED,
    DESIGN,
    CONSISTENCY,
    RESTATED,
)  # the kinds whose computation gives a comparable value


def rc(i, v, **kw):
    return recomputed_claim(CB, i, v, data=TOY, how="a test", **kw)


def _tool():
    spec = importlib.util.spec_from_file_location(
        "update_scoreboard", ROOT / "tools" / "update_scoreboard.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- the vocabulary ---------------------------------------------------------------------------------------------


def test_the_kinds_are_a_closed_distinct_vocabulary():
    assert len(EVIDENCE) == 6 and all(s.strip().endswith(".") for s in EVIDENCE.values())
    assert set(KIND_STATUSES) == set(KIND_INPUTS) == set(EVIDENCE)
    assert sorted({s for v in KIND_STATUSES.values() for s in v}) == sorted(STATUSES)
    inputs = [i for v in KIND_INPUTS.values() for i in v]
    assert len(inputs) == len(set(inputs))  # one input names one kind
    assert KIND_STATUSES[TWIN] == ("method only",) and KIND_STATUSES[UNAVAILABLE] == (
        "not reproducible here",
    )
    assert (
        "within tolerance" not in KIND_STATUSES[RESTATED]
    )  # a setting is the paper's or it is not


def test_each_constructor_makes_its_kind():
    rows = [
        rc("in16.n", 1000),
        design_claim(CB, "in16.n", 1000, design="a design", how="x"),
        consistency_claim(
            CB, "text.dir_upper", uses=["text.dir_lower"], f=lambda t: 1 / t, how="1 / t"
        ),
        restated_claim(CB, "in16.n", 1000, how="parameter n"),
        twin_claim(CB, "in16.n", 999, inputs="bundled model"),
        unavailable_claim(CB, "in16.n", missing="no file", command="make reproduce"),
    ]
    assert [r["evidence"] for r in rows] == list(EVIDENCE)
    assert [r["inputs"] for r in rows] == [KIND_INPUTS[k][-1 if k == TWIN else 0] for k in EVIDENCE]
    assert all(tuple(r) == COLUMNS for r in rows)
    assert [r["status"] for r in rows] == ["exact"] * 4 + ["method only", "not reproducible here"]


# --- statuses: worked examples ----------------------------------------------------------------------------------


def test_exact_is_equality_at_the_printed_precision():
    # the chapter prints the positive prediction rate of group 0 as 0.498 (three decimals)
    assert rc("out17.ppr.group_0", 0.4981)["status"] == "exact"
    assert rc("out17.ppr.group_0", 0.49795918)["status"] == "exact"  # the chapter's own 244/490
    assert rc("out17.ppr.group_0", 0.49849)["status"] == "exact"
    r = rc("out17.ppr.group_0", 0.49851, reason="rounds to 0.499")
    assert (r["status"], r["published"], r["reason"]) == ("differs", "0.498", "rounds to 0.499")
    assert rc("out17_summary.demographic_parity_diff", 0.19795918)["status"] == "exact"
    assert rc("out17_summary.demographic_parity_diff", 0.19749, reason="x")["status"] == "differs"


def test_exact_agrees_with_decimal_rounding_of_the_binary_value():
    "Property: 'exact' iff the value rounds (half-even, on its exact binary expansion) to the published digits."
    rng = random.Random(7)
    q = Decimal("0.001")
    for _ in range(300):
        v = rng.uniform(0.4965, 0.4995)
        expect = Decimal(v).quantize(q, rounding=ROUND_HALF_EVEN) == Decimal("0.498")
        assert rc("out17.ppr.group_0", v, reason="off")["status"] == (
            "exact" if expect else "differs"
        ), v


def test_within_tolerance_needs_a_tolerance_and_a_reason_and_keeps_it_only_then():
    r = rc("out17.ppr.group_0", 0.4986, tolerance=1e-3, reason="the chapter truncates")
    assert (r["status"], r["tolerance"], r["reason"]) == (
        "within tolerance",
        1e-3,
        "the chapter truncates",
    )
    assert rc("out17.ppr.group_0", 0.4981, reason="not needed")["reason"] == ""
    with pytest.raises(FairlibInputError, match="argument `reason`.*'within tolerance'"):
        rc("out17.ppr.group_0", 0.4986, tolerance=1e-3)
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        rc("out17.ppr.group_0", 0.4986, tolerance=1e-3, reason="   ")
    for bad in (0, -1e-3, float("nan"), "0.001"):
        with pytest.raises(FairlibInputError, match="argument `tolerance`"):
            rc("out17.ppr.group_0", 0.4986, tolerance=bad, reason="x")
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        restated_claim(CB, "in16.n", 999, how="n")
    assert restated_claim(CB, "in16.n", 999, how="n", reason="fewer records")["status"] == "differs"


def test_undefined_value_is_never_a_match():
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        rc("out17.ppr.group_0", float("nan"))
    assert (
        rc("out17.ppr.group_0", float("nan"), tolerance=1.0, reason="no positive predictions")[
            "status"
        ]
        == "differs"
    )


def test_qualitative_claims():
    line = "OK: DIR 1.660 >= 0.8 (passes the 80% rule)."
    assert rc("out17_summary.verdict", line)["status"] == "exact"
    assert (
        rc("out17_summary.verdict", "FAIL: DIR 0.602 < 0.8", reason="two-sided")["status"]
        == "differs"
    )
    assert rc("out17_summary.verdict", 1.66 >= 0.8)["status"] == "exact"
    with pytest.raises(FairlibInputError, match="argument `value`.*text"):
        rc("out17_summary.verdict", 1.66)
    with pytest.raises(FairlibInputError, match="argument `tolerance`"):
        rc("out17_summary.verdict", line, tolerance=0.1, reason="x")


def test_constructor_refusals_name_the_argument():
    cases = [
        (lambda: rc("out17.ppr.group_9", 0.5), r"`id`.*nearest"),
        (lambda: recomputed_claim("chapter", "in16.n", 1, data=TOY, how="x"), "`paper`"),
        (lambda: rc("out17.ppr.group_0", None), "`value`.*required"),
        (lambda: rc("out17.ppr.group_0", True), "`value`.*pass a number"),
        (lambda: rc("out17.ppr.group_0", [0.498]), "`value`"),
        (lambda: recomputed_claim(CB, "in16.n", 1000, data="file.csv", how="x"), "`data`"),
        (lambda: recomputed_claim(CB, "in16.n", 1000, data=TOY, how="  "), "`how`"),
        (lambda: twin_claim(CB, "in16.n", 1000, inputs="authors' data"), "`inputs`"),
        (lambda: unavailable_claim(CB, "in16.n", missing="", command="x"), "`missing`"),
        (lambda: unavailable_claim(CB, "in16.n", missing="x", command=None), "`command`"),
        (lambda: consistency_claim(CB, "in16.n", uses=[], f=len, how="x"), "`uses`"),
        (
            lambda: consistency_claim(CB, "in16.n", uses=["in16.n"], f=abs, how="x"),
            "`uses`.*itself",
        ),
        (lambda: consistency_claim(CB, "in16.n", uses=["no.such"], f=abs, how="x"), "`uses`"),
        (
            lambda: consistency_claim(CB, "in16.n", uses=["in16.seed"], f=lambda a, b: a, how="x"),
            "`f`",
        ),
        (
            lambda: consistency_claim(CB, "in16.n", uses=["in16.seed"], f=lambda a: None, how="x"),
            "`f`",
        ),
        (lambda: rc("in16.n", 1000, bound="~"), "`bound`"),
        (lambda: rc("out17_summary.verdict", 1.0, bound=">", reason="x"), "`bound`"),
    ]
    for call, arg in cases:
        with pytest.raises(FairlibInputError, match=f"argument {arg}"):
            call()


def test_a_consistency_claim_computes_its_value_from_the_published_values_it_names():
    pub = published_values("vfr").set_index("id")["value"]
    r = consistency_claim(
        "vfr",
        "axis1_grid.stable_pct",
        uses=["axis1_grid.stable", "axis1_grid.cells"],
        f=lambda s, n: 100 * s / n,
        how="x",
    )
    assert r["fairlib"] == pytest.approx(
        100 * pub["axis1_grid.stable"] / pub["axis1_grid.cells"]
    )  # 259/336 by hand
    assert (r["status"], r["uses"]) == ("exact", "axis1_grid.stable; axis1_grid.cells")
    assert (
        "value" not in inspect.signature(consistency_claim).parameters
    )  # it is handed no value of fairlib's


def test_a_bound_keeps_fairlibs_value_and_says_whether_it_meets_it():
    r = rc("in16.n", 1200, bound=">")
    assert (r["fairlib"], r["bound"], r["meets_bound"], r["status"]) == (
        1200,
        "> 1000",
        "yes",
        "exact",
    )
    r = rc("in16.n", 900, bound=">", reason="fewer")
    assert (r["fairlib"], r["meets_bound"], r["status"]) == (900, "no", "differs")
    assert rc("in16.n", 1000, bound=">=")["meets_bound"] == "yes"
    assert rc("in16.n", float("nan"), bound=">", reason="undefined")["meets_bound"] == "no"
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        rc("in16.n", 900, bound=">")
    with pytest.raises(FairlibInputError, match="argument `tolerance`"):
        rc("in16.n", 1200, bound=">", tolerance=1)


def test_mfarm_bound_rows_keep_the_computed_value():
    "The mFARM 'over 50,000 prompts' and 'over 200 times' rows hold 50,427 and 205, not the bound (issue 33)."
    df = pd.read_csv(
        ROOT / "figures" / "mfarm" / "claims.csv", dtype=str, keep_default_na=False
    ).set_index("claim")
    for i, bound in (("benchmark.prompts_over", "> 50000"), ("rq1.variance_ratio_over", "> 200")):
        row = df.loc[i]
        assert (row["bound"], row["meets_bound"], row["status"]) == (bound, "yes", "exact")
        assert float(row["fairlib"]) > float(bound[2:])
    assert df.loc["benchmark.prompts_over", "fairlib"] == str((1020 + 273) * 13 * 3)
    assert round(float(df.loc["rq1.variance_ratio_over", "fairlib"])) == 205


# --- sealed rows: the API refuses what it cannot stand behind --------------------------------------------------


def _row(**over):
    return dict(restated_claim(CB, "in16.n", 1000, how="n"), **over)


def test_rows_cannot_be_given_by_hand():
    good = restated_claim(CB, "in16.n", 1000, how="n")
    with pytest.raises(TypeError, match="read-only"):
        good["status"] = "differs"
    cases = [
        ([_row(status="differs")], "seal"),  # a status changed by hand
        (
            [_row(evidence=RECOMPUTED, inputs="authors' data")],
            "seal",
        ),  # a kind changed by hand (consistently)
        ([_row(evidence=TWIN)], "not one a 'method on a twin' row can have"),
        ([_row(status="reproduced")], "'reproduced'"),
        ([_row(evidence="reproduced")], "evidence"),
        ([_row(fairlib=999)], "seal"),
        ([{k: v for k, v in good.items() if k != "seal"}], "seal"),
        ([{"claim": "in16.n", "status": "exact"}], "lack the claim column"),
        ([good, good], "more than once"),
        ([], "no claim rows"),
    ]
    for rows, why in cases:
        with pytest.raises(FairlibInputError, match=f"argument `rows`.*{why}"):
            check_claims(rows, paper=CB)


def test_ids_outside_the_published_table_and_stale_values_are_refused():
    f = dict(claim="in99.n", location="x", quantity="x", published="1", printed="int", fairlib=1)
    forged = _sealed(
        CB,
        {**f, "evidence": RESTATED, "inputs": "fairlib's settings", "status": "exact", "how": "x"},
    )
    with pytest.raises(FairlibInputError, match=r"argument `rows`.*in99\.n.*not published values"):
        check_claims([forged], paper=CB)
    stale = _sealed(CB, {**_row(), "published": "999"})
    with pytest.raises(FairlibInputError, match="argument `rows`.*another published value"):
        check_claims([stale], paper=CB)
    with pytest.raises(FairlibInputError, match="not published values of 'vfr'"):
        check_claims([restated_claim(CB, "in16.n", 1000, how="n")], paper="vfr")


def test_a_row_survives_a_dataframe_and_a_csv_unchanged(tmp_path):
    rows = [
        rc("out17.ppr.group_0", 0.4986, tolerance=1e-3, reason="r"),
        restated_claim(CB, "in16.n", 1000, how="n"),
    ]
    assert (
        len(check_claims(pd.DataFrame(rows), paper=CB)) == 2
    )  # ints become floats, None NaN: still verified
    write_claims(rows, paper=CB, notebook="a", fig_dir=tmp_path)
    back = read_claims(tmp_path / "claims" / "a.csv", paper=CB)
    assert back["fairlib"].tolist() == ["0.4986", "1000"] and back["tolerance"].tolist() == [
        "0.001",
        "",
    ]


def test_write_read_collect_refusals(tmp_path):
    write_claims(
        [restated_claim(CB, "in16.n", 1000, how="n")], paper=CB, notebook="a", fig_dir=tmp_path
    )
    part = tmp_path / "claims" / "a.csv"
    part.write_text(part.read_text().replace(",exact,", ",differs,"))  # a status typed into the CSV
    with pytest.raises(FairlibInputError, match="argument `path`.*seal"):
        read_claims(part, paper=CB)
    with pytest.raises(FairlibInputError, match="argument `path`"):
        collect_claims(CB, fig_dir=tmp_path)
    with pytest.raises(FairlibInputError, match="argument `path`"):
        read_claims(tmp_path / "none.csv", paper=CB)
    with pytest.raises(FairlibInputError, match="argument `fig_dir`"):
        collect_claims(CB, fig_dir=tmp_path / "missing")
    with pytest.raises(FairlibInputError, match="argument `paper`.*no claims parts"):
        (tmp_path / "empty").mkdir()
        collect_claims(CB, fig_dir=tmp_path / "empty")
    with pytest.raises(FairlibInputError, match="argument `notebook`"):
        write_claims(
            [restated_claim(CB, "in16.n", 1000, how="n")],
            paper=CB,
            notebook="../x",
            fig_dir=tmp_path,
        )
    with pytest.raises(FairlibInputError, match="argument `rows`"):
        write_claims([_row(status="differs")], paper=CB, notebook="b", fig_dir=tmp_path)


def test_scoreboard_refuses_a_missing_root_and_a_forged_table(tmp_path):
    with pytest.raises(FairlibInputError, match="argument `root`.*not a folder"):
        scoreboard(tmp_path / "nowhere")  # it used to give an empty scoreboard
    with pytest.raises(FairlibInputError, match="argument `root`.*figures"):
        scoreboard(tmp_path)
    fig = tmp_path / "figures" / CB
    write_claims([restated_claim(CB, "in16.n", 1000, how="n")], paper=CB, notebook="a", fig_dir=fig)
    collect_claims(CB, fig_dir=fig)
    assert scoreboard(tmp_path).loc[(CB, RESTATED), "exact"] == 1
    t = (fig / "claims.csv").read_text()
    (fig / "claims.csv").write_text(
        t.replace("in16.n", "in99.n")
    )  # a claim id outside the published table
    with pytest.raises(FairlibInputError, match=r"argument `root`.*in99\.n"):
        scoreboard(tmp_path)


def test_real_data_masks_small_counts(tmp_path):
    r = twin_claim("vfr", "cohort.hospitals", 7)
    rate = twin_claim("vfr", "cohort.positive_rate_pct", 100 * 3 / 7)  # 3 of 7 records
    big = twin_claim("vfr", "cohort.records", 925128)
    df = write_claims([r, rate, big], paper="vfr", notebook="n", fig_dir=tmp_path, real=True)
    assert df["fairlib"].tolist() == ["<11", 42.857, 925128]
    assert read_claims(tmp_path / "claims" / "n.csv", paper="vfr")["fairlib"].tolist() == [
        "<11",
        "42.857",
        "925128",
    ]


def test_per_case_provenance_is_the_digest_of_the_data(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("a\n1\n2\n")
    d = per_case_file(f, what="two records")
    assert (d.sha256, d.n_records) == (hashlib.sha256(f.read_bytes()).hexdigest(), 2)
    frame = pd.DataFrame({"a": [1, 2]})
    assert (
        per_case_frame(frame, name="x", what="y").sha256
        == hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest()
    )
    with pytest.raises(FairlibInputError, match="argument `n_records`"):
        per_case_file(f.rename(tmp_path / "r.bin"), what="x")


def test_markdown_numbers():
    assert format_number(0.0123, 3) == "0.012"
    assert format_number(3e-5, 3) == "3.00e-05"
    assert format_number(-0.0001, 3) == "-1.00e-04"
    assert format_number(float("nan")) == "NaN"
    assert (
        format_number("42") == "42"
        and format_number("OK: DIR") == "OK: DIR"
        and format_number("") == ""
    )
    rng = random.Random(3)
    for _ in range(200):
        x = rng.choice([-1, 1]) * 10 ** rng.uniform(-9, 2)
        s = format_number(x, 3)
        assert float(s) != 0 and math.isclose(float(s), x, rel_tol=0.02, abs_tol=5e-4), (x, s)


# --- claims tables and scoreboards count kind x status ---------------------------------------------------------


def _fake_checkout(tmp_path, rows):
    fig = tmp_path / "figures" / CB
    write_claims(rows, paper=CB, notebook="01", fig_dir=fig)
    collect_claims(CB, fig_dir=fig)
    return tmp_path


def test_scoreboard_counts_kind_by_status(tmp_path):
    root = _fake_checkout(
        tmp_path,
        [
            rc("out17.ppr.group_0", 0.498),
            rc("out17.ppr.group_1", 0.5, reason="x"),
            restated_claim(CB, "in16.n", 1000, how="n"),
            consistency_claim(
                CB, "text.dir_upper", uses=["text.dir_lower"], f=lambda t: 1 / t, how="1/t"
            ),
            twin_claim(CB, "in16.seed", 7),
        ],
    )
    b = scoreboard(root)
    assert list(b.index.get_level_values("paper").unique()) == [CB]
    assert b.loc[(CB, RECOMPUTED), ["claims", "exact", "differs"]].tolist() == [2, 1, 1]
    assert (
        headline_count(b) == 1
    )  # only the recomputed claim that agrees; not the restated or consistency ones
    md = scoreboard_markdown(b)
    assert md.startswith("**1 published number is recomputed from per-case data and agrees")
    assert f"| {CB} | recomputed from per-case data | 2 | 1 | 0 | 1 | - | - |" in md
    assert f"| {CB} | consistency of printed values | 1 | 1 | 0 | 0 | - | - |" in md
    assert "| vfr | no ledger yet |" in md
    paper_md = (root / "figures" / CB / "claims.md").read_text()
    assert "| restated input | 1 | 1 | - | 0 | - | - |" in paper_md


def test_scoreboard_tool_rewrites_and_checks_every_block(tmp_path, capsys):
    root = _fake_checkout(tmp_path, [restated_claim(CB, "in16.n", 1000, how="n")])
    (root / "docs").mkdir()
    for rel, (a, b) in {
        "README.md": (START, END),
        "docs/index.md": (START, END),
        "docs/ledger.md": (EVIDENCE_START, EVIDENCE_END),
    }.items():
        (root / rel).write_text(f"# x\n\nintro\n\n{a}\nstale\n{b}\n\n## more\n")
    tool = _tool()
    assert tool.main(["--root", str(root), "--check"]) == 1
    assert tool.main(["--root", str(root)]) == 0
    assert tool.main(["--root", str(root), "--check"]) == 0
    assert read_block((root / "README.md").read_text()) == scoreboard_markdown(scoreboard(root))
    assert (
        read_block((root / "docs/ledger.md").read_text(), EVIDENCE_START, EVIDENCE_END)
        == evidence_markdown()
    )
    _fake_checkout(
        tmp_path, [restated_claim(CB, "in16.n", 999, how="n", reason="x")]
    )  # a table changes
    assert tool.main(["--root", str(root), "--check"]) == 1
    with pytest.raises(FairlibInputError, match="argument `text`"):
        read_block("# no markers\n")
    with pytest.raises(FairlibInputError, match="argument `text`"):
        with_block(f"{END}\n{START}\n", "x")


@pytest.mark.parametrize("rel", ["README.md", "docs/index.md"])
def test_the_committed_scoreboard_blocks_agree_with_the_claims_tables(rel):
    text = (ROOT / rel).read_text(encoding="utf-8")
    assert read_block(text) == scoreboard_markdown(scoreboard(ROOT)), (
        f"{rel}'s scoreboard is stale: run tools/update_scoreboard.py"
    )


def test_the_docs_vocabulary_block_is_the_ledgers():
    text = (ROOT / "docs" / "ledger.md").read_text(encoding="utf-8")
    assert read_block(text, EVIDENCE_START, EVIDENCE_END) == evidence_markdown()
    assert (
        "ledger"
        in (ROOT / "docs" / "index.md").read_text(encoding="utf-8").split("```{toctree}")[1]
    )


def test_the_readme_headline_counts_only_claims_recomputed_from_per_case_data():
    "Oracle: the committed claims tables, counted here with pandas, against the number the README's headline prints."
    n = 0
    for p in PAPERS:
        df = pd.read_csv(ROOT / "figures" / p / "claims.csv", dtype=str, keep_default_na=False)
        n += int(
            (
                (df["evidence"] == "recomputed from per-case data") & df["status"].isin(ESTABLISHED)
            ).sum()
        )
    head = read_block((ROOT / "README.md").read_text(encoding="utf-8")).splitlines()[0]
    assert head.startswith(f"**{n} published number"), head
    assert headline_count(scoreboard(ROOT)) == n


# --- every committed table: each row's kind is one its computation produces -------------------------------------


def _tables():
    out = []
    for p in PAPERS:
        out.append((p, ROOT / "figures" / p / "claims.csv"))
        out += [(p, f) for f in sorted((ROOT / "figures" / p / "claims").glob("*.csv"))]
    return out


@pytest.mark.parametrize(
    "paper,path",
    _tables(),
    ids=lambda x: x if isinstance(x, str) else x.relative_to(ROOT).as_posix(),
)
def test_every_claims_table_row_is_sealed_and_of_a_kind_its_computation_produces(paper, path):
    df = read_claims(path, paper=paper)  # the seal of every row matches its fields
    assert set(df["evidence"]) <= set(EVIDENCE)
    established = df[df["status"].isin(ESTABLISHED)]
    assert set(established["evidence"]) <= set(COMPUTED_KINDS), path
    for r in df.to_dict("records"):
        kind, where = r["evidence"], f"{path.name}: {r['claim']}"
        assert r["status"] in KIND_STATUSES[kind] and r["inputs"] in KIND_INPUTS[kind], where
        if kind == RECOMPUTED:
            assert "sha256 " in r["source"] and r["how"], where
        elif kind == CONSISTENCY:
            uses = r["uses"].split("; ")
            assert (
                uses and r["claim"] not in uses and set(uses) <= set(published_values(paper)["id"])
            ), where
        elif kind == DESIGN:
            assert r["source"] and r["how"], where
        elif kind == RESTATED:
            assert r["how"] and r["source"] == "", where
        elif kind == UNAVAILABLE:
            assert r["fairlib"] == "" and r["command"] and r["reason"], where
        if r["status"] != "exact" and kind in COMPUTED_KINDS:
            assert r["reason"], where


def _known_sources() -> dict[str, str]:
    "SHA-256 of every per-case source a committed row may name, recomputed here from the file or the generator."
    from importlib import resources

    from fairlib.handbook import biased_classifier_example

    chapter = biased_classifier_example(1000, 42).to_csv(index=False).encode()
    extract = resources.files("fairlib.agent").joinpath("data/published/decisions.csv").read_bytes()
    return {
        "chapter": hashlib.sha256(chapter).hexdigest(),
        "extract": hashlib.sha256(extract).hexdigest(),
    }


def test_every_per_case_row_names_data_whose_digest_is_recomputed_here():
    known = _known_sources()
    seen = set()
    for p in PAPERS:
        df = pd.read_csv(ROOT / "figures" / p / "claims.csv", dtype=str, keep_default_na=False)
        for src in df.loc[df["evidence"] == RECOMPUTED, "source"]:
            for d in {part.split("sha256 ")[1].rstrip(")") for part in src.split("; ")}:
                hit = {k for k, v in known.items() if v.startswith(d)}
                assert hit, (p, src)
                seen |= hit
    assert seen == {
        "chapter",
        "extract",
    }  # the chapter's records and the authors' released decisions


def test_the_chapter_ledger_covers_every_published_value():
    df = pd.read_csv(ROOT / "figures" / CB / "claims.csv", dtype=str, keep_default_na=False)
    assert sorted(df["claim"]) == sorted(published_values(CB)["id"])
    assert set(df["evidence"]) == {RECOMPUTED, RESTATED}
    assert set(df.loc[df["claim"].str.startswith("in16."), "evidence"]) == {
        RESTATED
    }  # the seed, n and parameters


# --- no sentence claims more than its kind ----------------------------------------------------------------------


def test_the_overclaim_check_reads_the_vocabulary_of_claims():
    text = "\n\n".join(
        [
            "The extract reproduces the paper's numbers exactly.",  # 1: flagged, names no per-case data
            "Recomputed from the authors' released decisions, the floor reproduces the paper's 0.087.",  # 3
            "The counts agree exactly with the paper's.",  # 5: flagged
            "Every published value is confirmed.",  # 7: flagged
            "The rates match the paper's Table 4.",  # 9: flagged
            "On the synthetic twin the values are `method only`, never `exact`.",  # 11: names its kind
            "fairlib uses the exact McNemar test; the paper's numbers are not reproduced here.",  # 13: code, negation
            "Run `make reproduce PAPER=vfr` for the published values.",  # 15: a command
            "All 27 of its 28 published numbers are equal.",  # 17: a count of claims
            "A run is reproducible and its seed is fixed.",  # 19: no published number
            "The values are arithmetic on the printed numbers and agree exactly.",  # 21: names its kind
            f"{START}\n201 claims reproduced\n{END}",  # 23: a generated block
        ]
    )
    got = overclaims(text, paper="fairmedagent")
    assert [n for n, *_ in got] == [1, 5, 7, 9, 17]
    assert got[-1][2].startswith("a count of claims")
    board = pd.DataFrame(
        [{"claims": 1, **{s: int(s == "differs") for s in STATUSES}}],
        index=pd.MultiIndex.from_tuples(
            [("fairmedagent", RECOMPUTED)], names=["paper", "evidence"]
        ),
    )
    hit = overclaims(
        "Recomputed from the released decisions, the floor is reproduced.",
        board,
        paper="fairmedagent",
    )
    assert hit and "no per-case claim that agrees" in hit[0][2]  # the ledger's side of the rule


def test_sentences_are_attributed_to_their_paper():
    text = (
        "### VFR-Audit\nIts rates are exact.\n\n## Other\nIts rates are exact.\n\n"
        "The mFARM values match the paper's."
    )
    got = overclaims(text, unattributed=False)
    assert [(n, p) for n, p, *_ in got] == [(2, "vfr"), (7, "mfarm")]
    assert [n for n, *_ in overclaims(text)] == [
        2,
        7,
    ]  # line 5 names no paper and no published number
    loose = "Its published rates are exact.\n\nA value the independent computation confirms."
    assert [(n, p) for n, p, *_ in overclaims(loose)] == [
        (1, "")
    ]  # a test that confirms a value is about code


def test_no_sentence_of_the_checkout_claims_more_than_its_kind():
    """The README, the docs pages, the package's data READMEs and the Markdown of every notebook, read against the
    ledger (issue 33; `python tools/update_scoreboard.py --overclaims` lists the same)."""
    got = repository_overclaims(ROOT)
    assert not got, "sentences that claim more than their kind of evidence:\n" + "\n".join(
        f"  {f}:{n} [{p or '-'}] {why}: {s[:160]}" for f, n, p, why, s in got
    )


def test_runs_index_shows_kind_by_status(tmp_path):
    from fairlib.runner.runindex import build_index

    fig = tmp_path / "figures" / CB
    write_claims(
        [rc("out17.ppr.group_0", 0.498), restated_claim(CB, "in16.n", 999, how="n", reason="x")],
        paper=CB,
        notebook="a",
        fig_dir=fig,
    )
    collect_claims(CB, fig_dir=fig)
    nb = tmp_path / "01_chapter.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    job = dict(
        paper=CB,
        stem="01_chapter",
        output=nb,
        final_fig_dir=str(fig),
        params=dict(profile="quick", fig_dir=str(fig)),
        seconds=1.0,
        finished="x",
    )
    html = build_index([job], tmp_path / "index.html").read_text()
    board = html[
        html.index("Reproduction ledger") : html.index(
            "</table>", html.index("Reproduction ledger")
        )
    ]
    assert "1 recomputed from per-case data" in board
    assert (
        '<th scope="row">recomputed from per-case data</th><td>1</td><td>1</td><td>0</td><td>0</td><td>-</td><td>-</td>'
        in board
    )
    assert (
        '<th scope="row">restated input</th><td>1</td><td>0</td><td>-</td><td>1</td><td>-</td><td>-</td>'
        in board
    )
    (fig / "claims.csv").write_text((fig / "claims.csv").read_text().replace("in16.n", "in99.n"))
    html = build_index([job], tmp_path / "index.html").read_text()
    assert "the claims table was refused" in html  # a forged table is not counted


def test_claims_markdown_heads_with_the_kind_by_status_table():
    df = check_claims([rc("out17.ppr.group_0", 0.498), twin_claim(CB, "in16.n", 5)], paper=CB)
    md = claims_markdown(df, CB)
    assert "| method on a twin | 1 | - | - | - | 1 | - |" in md and "(2 claims; 1 recomputed" in md
    assert tally(df).loc[TWIN, "method only"] == 1
