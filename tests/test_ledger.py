"""The reproduction ledger (fairlib.ledger): statuses computed from fairlib's value and the published one, the claims
tables, the README scoreboard and the check on README lines that say 'reproduced' (issue 25)."""

import importlib.util
import math
import random
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib.ledger import (
    COLUMNS,
    END,
    START,
    STATUSES,
    claim,
    collect_claims,
    format_number,
    notebook_overclaims,
    overclaims,
    readme_scoreboard,
    scoreboard,
    scoreboard_markdown,
    with_scoreboard,
    write_claims,
)
from fairlib.published import PAPERS, published_values

ROOT = Path(__file__).resolve().parent.parent
CB = "classification_bias"


def _tool():
    spec = importlib.util.spec_from_file_location("update_scoreboard", ROOT / "tools" / "update_scoreboard.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- statuses: worked examples -------------------------------------------------------------------------------------


def test_exact_is_equality_at_the_printed_precision():
    # the chapter prints the positive prediction rate of group 0 as 0.498 (three decimals)
    assert claim(CB, "out17.ppr.group_0", 0.4981)["status"] == "exact"
    assert claim(CB, "out17.ppr.group_0", 0.49795918)["status"] == "exact"  # the chapter's own 244/490
    assert claim(CB, "out17.ppr.group_0", 0.49849)["status"] == "exact"
    r = claim(CB, "out17.ppr.group_0", 0.49851, reason="rounds to 0.499")
    assert (r["status"], r["published"], r["reason"]) == ("differs", "0.498", "rounds to 0.499")
    # four decimals: 0.19795918 is 0.1980
    assert claim(CB, "out17_summary.demographic_parity_diff", 0.19795918)["status"] == "exact"
    assert claim(CB, "out17_summary.demographic_parity_diff", 0.19749, reason="x")["status"] == "differs"


def test_exact_agrees_with_decimal_rounding_of_the_binary_value():
    "Property: 'exact' iff the value rounds (half-even, on its exact binary expansion) to the published digits."
    rng = random.Random(7)
    q = Decimal("0.001")
    for _ in range(400):
        v = rng.uniform(0.4965, 0.4995)
        expect = Decimal(v).quantize(q, rounding=ROUND_HALF_EVEN) == Decimal("0.498")
        got = claim(CB, "out17.ppr.group_0", v, reason="off")["status"]
        assert got == ("exact" if expect else "differs"), v


def test_int_values():
    assert claim(CB, "in16.n", 1000)["status"] == "exact"
    assert claim(CB, "in16.n", 1000.0)["status"] == "exact"
    assert claim(CB, "in16.n", 999, reason="fewer records")["status"] == "differs"
    assert claim(CB, "in16.n", 999, tolerance=1, reason="one record off")["status"] == "within tolerance"
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        claim(CB, "in16.n", 999)


def test_within_tolerance_needs_a_tolerance_and_a_reason():
    r = claim(CB, "out17.ppr.group_0", 0.4986, tolerance=1e-3, reason="the chapter truncates")
    assert (r["status"], r["tolerance"]) == ("within tolerance", 1e-3)
    with pytest.raises(FairlibInputError, match="argument `reason`.*'within tolerance'"):
        claim(CB, "out17.ppr.group_0", 0.4986, tolerance=1e-3)
    with pytest.raises(FairlibInputError, match="argument `reason`.*'differs'"):
        claim(CB, "out17.ppr.group_0", 0.4986)  # no tolerance stated: it differs
    assert claim(CB, "out17.ppr.group_0", 0.5, tolerance=1e-3, reason="x")["status"] == "differs"
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        claim(CB, "out17.ppr.group_0", 0.4986, tolerance=1e-3, reason="   ")  # a blank reason is no reason
    for bad in (0, -1e-3, float("nan"), "0.001"):
        with pytest.raises(FairlibInputError, match="argument `tolerance`"):
            claim(CB, "out17.ppr.group_0", 0.4986, tolerance=bad, reason="x")


def test_undefined_value_is_never_a_match():
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        claim(CB, "out17.ppr.group_0", float("nan"))
    r = claim(CB, "out17.ppr.group_0", float("nan"), tolerance=1.0, reason="no positive predictions")
    assert r["status"] == "differs"


def test_other_inputs_are_method_only():
    r = claim(CB, "out17.ppr.group_0", 0.31, inputs="synthetic twin", shape=True)
    assert (r["status"], r["shape_check"], r["inputs"]) == ("method only", "holds", "synthetic twin")
    r = claim(CB, "out17.ppr.group_0", 0.498, inputs="bundled model", shape=False)
    assert (r["status"], r["shape_check"]) == ("method only", "fails")  # equal by chance is still not comparable
    assert claim(CB, "out17.ppr.group_0", inputs="bundled model")["shape_check"] == ""
    with pytest.raises(FairlibInputError, match="argument `tolerance`"):
        claim(CB, "out17.ppr.group_0", 0.31, inputs="synthetic twin", tolerance=0.1)


def test_not_available_needs_the_command():
    cmd = "make reproduce PAPER=classification_bias"
    r = claim(CB, "out17.ppr.group_0", inputs="not available here", command=cmd)
    assert (r["status"], r["command"], r["fairlib"]) == ("not reproducible here", cmd, None)
    for bad in (None, "", "  "):
        with pytest.raises(FairlibInputError, match="argument `command`"):
            claim(CB, "out17.ppr.group_0", inputs="not available here", command=bad)
    with pytest.raises(FairlibInputError, match="argument `value`"):
        claim(CB, "out17.ppr.group_0", 0.498, inputs="not available here", command=cmd)


def test_refusals():
    with pytest.raises(FairlibInputError, match=r"argument `id`.*out17\.ppr\.group_9.*nearest"):
        claim(CB, "out17.ppr.group_9", 0.5)
    with pytest.raises(FairlibInputError, match="argument `paper`"):
        claim("chapter", "out17.ppr.group_0", 0.5)
    with pytest.raises(FairlibInputError, match="argument `inputs`"):
        claim(CB, "out17.ppr.group_0", 0.5, inputs="twin")
    with pytest.raises(FairlibInputError, match="argument `value`.*required"):
        claim(CB, "out17.ppr.group_0")  # the authors' data but no value
    with pytest.raises(FairlibInputError, match="argument `value`.*pass a number"):
        claim(CB, "out17.ppr.group_0", True)  # a boolean is not a rate
    with pytest.raises(FairlibInputError, match="argument `value`.*pass a number"):
        claim(CB, "out17.ppr.group_0", "0.498")  # nor is the text of one
    with pytest.raises(FairlibInputError, match="argument `value`"):
        claim(CB, "out17.ppr.group_0", [0.498])


def test_qualitative_claims():
    line = "OK: DIR 1.660 >= 0.8 (passes the 80% rule)."
    assert claim(CB, "out17_summary.verdict", line)["status"] == "exact"
    assert claim(CB, "out17_summary.verdict", "FAIL: DIR 0.602 < 0.8", reason="two-sided")["status"] == "differs"
    # a statement checked by a boolean the notebook computes
    assert claim(CB, "out17_summary.verdict", 1.66 >= 0.8)["status"] == "exact"
    with pytest.raises(FairlibInputError, match="argument `reason`"):
        claim(CB, "out17_summary.verdict", 0.60 >= 0.8)
    assert claim(CB, "out17_summary.verdict", 0.60 >= 0.8, reason="fails two-sided")["status"] == "differs"
    with pytest.raises(FairlibInputError, match="argument `value`.*text"):
        claim(CB, "out17_summary.verdict", 1.66)
    with pytest.raises(FairlibInputError, match="argument `tolerance`"):
        claim(CB, "out17_summary.verdict", line, tolerance=0.1, reason="x")


def test_rows_have_the_columns_and_a_status_of_the_closed_set():
    rows = [
        claim(CB, "in16.n", 1000),
        claim(CB, "in16.n", 990, tolerance=20, reason="x"),
        claim(CB, "in16.n", 1, reason="x"),
        claim(CB, "in16.n", 1, inputs="synthetic twin"),
        claim(CB, "in16.n", inputs="not available here", command="make reproduce"),
    ]
    assert [r["status"] for r in rows] == list(STATUSES)
    assert all(tuple(r) == COLUMNS for r in rows)


# --- claims tables --------------------------------------------------------------------------------------------------


def test_write_and_collect(tmp_path):
    write_claims([claim(CB, "in16.n", 1000)], paper=CB, notebook="01_a", fig_dir=tmp_path)
    r = claim(CB, "out17.ppr.group_0", 0.498001, tolerance=1e-6, reason="tiny")
    write_claims([r, claim(CB, "in16.seed", 42)], paper=CB, notebook="02_b", fig_dir=tmp_path)
    assert sorted(p.name for p in (tmp_path / "claims").iterdir()) == ["01_a.csv", "02_b.csv"]
    m = collect_claims(CB, fig_dir=tmp_path)
    assert m["claim"].tolist() == ["in16.n", "out17.ppr.group_0", "in16.seed"]
    assert m["notebook"].tolist() == ["01_a", "02_b", "02_b"]
    back = pd.read_csv(tmp_path / "claims.csv", dtype=str, keep_default_na=False)
    assert back["published"].tolist() == ["1000", "0.498", "42"]  # as printed, trailing zeros kept
    md = (tmp_path / "claims.md").read_text()
    assert "1.00e-06" in md and "0.0000" not in md  # the tolerance is not printed as zero
    assert "(3 claims: 3 exact, 0 within tolerance, 0 differs, 0 method only, 0 not reproducible here)" in md
    assert "| in16.n " in md and "| exact " in md


def test_collect_refuses_duplicates_and_strays(tmp_path):
    write_claims([claim(CB, "in16.n", 1000)], paper=CB, notebook="a", fig_dir=tmp_path)
    write_claims([claim(CB, "in16.n", 999, reason="y")], paper=CB, notebook="b", fig_dir=tmp_path)
    with pytest.raises(FairlibInputError, match=r"in16\.n.*more than once"):
        collect_claims(CB, fig_dir=tmp_path)
    with pytest.raises(FairlibInputError, match="no claims parts"):
        collect_claims(CB, fig_dir=tmp_path / "empty")
    typed = dict(claim(CB, "in16.seed", 42), status="reproduced")  # a status typed by hand
    with pytest.raises(FairlibInputError, match="'reproduced'"):
        write_claims([typed], paper=CB, notebook="c", fig_dir=tmp_path)
    with pytest.raises(FairlibInputError, match="argument `notebook`"):
        write_claims([claim(CB, "in16.seed", 42)], paper=CB, notebook="../x", fig_dir=tmp_path)


def test_real_data_masks_small_counts(tmp_path):
    r = claim("vfr", "cohort.hospitals", 7, inputs="synthetic twin")
    rate = claim("vfr", "cohort.positive_rate_pct", 100 * 3 / 7, inputs="synthetic twin")  # 3 of 7 records
    big = claim("vfr", "cohort.records", 925128, inputs="synthetic twin")
    df = write_claims([r, rate, big], paper="vfr", notebook="n", fig_dir=tmp_path, real=True)
    assert df["fairlib"].tolist() == ["<11", 42.857, 925128]
    assert "7" not in (tmp_path / "claims" / "n.csv").read_text().splitlines()[1].split(",")
    synthetic = write_claims([r, rate], paper="vfr", notebook="m", fig_dir=tmp_path)
    assert synthetic["fairlib"].tolist() == [7, 100 * 3 / 7]


def test_markdown_numbers():
    assert format_number(0.0123, 3) == "0.012"
    assert format_number(3e-5, 3) == "3.00e-05"
    assert format_number(-4e-7) == "-4.00e-07"
    assert format_number(0.0, 3) == "0.000"
    assert format_number(-0.0001, 3) == "-1.00e-04"
    assert format_number(float("nan")) == "NaN"
    assert format_number(1000) == "1000"
    assert format_number("42") == "42"
    assert format_number("OK: DIR") == "OK: DIR"
    assert format_number(True) == "True"
    assert format_number("") == ""
    rng = random.Random(3)
    for _ in range(300):
        x = rng.choice([-1, 1]) * 10 ** rng.uniform(-9, 2)
        s = format_number(x, 3)
        assert float(s) != 0 and math.isclose(float(s), x, rel_tol=0.02, abs_tol=5e-4), (x, s)


# --- scoreboard and README ------------------------------------------------------------------------------------------


def _fake_checkout(tmp_path, statuses):
    rows = []
    for i, s in enumerate(statuses):
        pid = ["in16.n", "in16.seed", "out17.ppr.group_0", "out17.ppr.group_1"][i]
        v = {"in16.n": 1000, "in16.seed": 42, "out17.ppr.group_0": 0.498, "out17.ppr.group_1": 0.3}[pid]
        if s == "differs":
            rows.append(claim(CB, pid, v * 2, reason="x"))
        elif s == "method only":
            rows.append(claim(CB, pid, v, inputs="synthetic twin"))
        else:
            rows.append(claim(CB, pid, v))
    fig = tmp_path / "figures" / CB
    write_claims(rows, paper=CB, notebook="01", fig_dir=fig)
    collect_claims(CB, fig_dir=fig)
    return tmp_path


def test_scoreboard_counts(tmp_path):
    root = _fake_checkout(tmp_path, ["exact", "differs", "exact", "method only"])
    b = scoreboard(root)
    assert list(b.index) == list(PAPERS)
    assert b.loc[CB, ["claims", "exact", "differs", "method only", "within tolerance"]].tolist() == [4, 2, 1, 1, 0]
    assert b.loc["vfr", "claims"] == 0
    md = scoreboard_markdown(b)
    assert f"| {CB} | 4 | 2 | 0 | 1 | 1 | 0 |" in md and "| vfr | no ledger yet |" in md


def test_scoreboard_tool_and_readme_agreement(tmp_path, capsys):
    root = _fake_checkout(tmp_path, ["exact", "exact"])
    (root / "README.md").write_text(f"# x\n\nintro\n\n{START}\nstale\n{END}\n\n## more\n")
    tool = _tool()
    assert tool.main(["--root", str(root), "--check"]) == 1  # the stale block disagrees
    assert tool.main(["--root", str(root)]) == 0
    text = (root / "README.md").read_text()
    assert readme_scoreboard(text) == scoreboard_markdown(scoreboard(root))
    assert text.startswith("# x\n\nintro\n\n") and text.endswith("\n\n## more\n")
    assert tool.main(["--root", str(root), "--check"]) == 0
    _fake_checkout(tmp_path, ["exact", "differs"])  # a claims table changes; the README does not
    assert tool.main(["--root", str(root), "--check"]) == 1
    with pytest.raises(FairlibInputError, match="argument `text`"):
        readme_scoreboard("# no markers\n")
    with pytest.raises(FairlibInputError, match="argument `text`"):
        with_scoreboard(f"{END}\n{START}\n", "x")


def test_the_readme_block_agrees_with_the_claims_tables():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_scoreboard(text) == scoreboard_markdown(scoreboard(ROOT)), (
        "README.md's scoreboard is stale: run `python tools/update_scoreboard.py`"
    )


def test_reproduced_lines_checked_against_the_ledger(tmp_path):
    board = pd.DataFrame(
        [
            {"paper": CB, "claims": 2, "exact": 1, "within tolerance": 1, "differs": 0},
            {"paper": "vfr", "claims": 2, "exact": 1, "within tolerance": 0, "differs": 1},
            {"paper": "mfarm", "claims": 0, "exact": 0, "within tolerance": 0, "differs": 0},
        ]
    ).set_index("paper")
    for s in STATUSES:
        board[s] = board.get(s, 0)
    text = "\n".join(
        [
            "# fairlib",  # 1
            "The classification bias chapter is reproduced.",  # 2: all established: fine
            "VFR-Audit is reproduced in full.",  # 3: flagged (a claim differs)
            START,  # 4
            "| vfr reproduced |",  # 5: inside the block: not read
            END,  # 6
            "### VFR-Audit (nbs/papers/vfr/)",  # 7
            "| Table 4 | reproduced on the twin |",  # 8: flagged through the section
            "| Table 5 | computed |",  # 9: does not say it
            "| mFARM Table 6 | reproduced |",  # 10: flagged: names mFARM, which has no ledger
            "| chapter metrics (classification_bias) | reproduced |",  # 11: names the chapter: fine
            "## Install",  # 12: leaves the section
            "nothing is reproduced here by magic",  # 13: no paper: not flagged
        ]
    )
    got = overclaims(text, board)
    assert [(n, p) for n, p, _ in got] == [(3, "vfr"), (8, "vfr"), (10, "mfarm")]
    assert got[1][2] == "| Table 4 | reproduced on the twin |"


def test_readme_says_reproduced_only_where_the_ledger_establishes_it():
    "No README line says 'reproduced' for a paper whose claims are not all exact / within tolerance (issue 25)."
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    got = overclaims(text, scoreboard(ROOT))
    assert not got, "README lines say 'reproduced' beyond the ledger (tools/update_scoreboard.py --overclaims):\n" + (
        "\n".join(f"  README.md:{n} [{p}] {line}" for n, p, line in got)
    )


def test_paper_notebooks_and_docs_say_reproduced_only_where_the_ledger_establishes_it():
    """The same rule in every paper notebook's Markdown (each line read as a claim about its own paper) and on the
    documentation site's landing page (issue 25: 'no sentence anywhere says reproduced ...')."""
    got = notebook_overclaims(ROOT)
    assert not got, "paper notebooks say 'reproduce(d)' beyond the ledger:\n" + "\n".join(
        f"  {nb} (cell line {n}) [{p}] {line}" for nb, n, p, line in got
    )
    board = scoreboard(ROOT)
    for page in sorted((ROOT / "docs").glob("*.md")):
        got = overclaims(page.read_text(encoding="utf-8"), board)
        assert not got, f"{page.name} says 'reproduce(d)' beyond the ledger: {got}"


def test_overclaims_reads_a_notebook_line_as_its_papers_claim(tmp_path):
    "A synthetic paper notebook: a sentence that says 'reproduces' is flagged when its paper has a differing claim."
    import json

    for p in ("vfr", "mfarm"):
        d = tmp_path / "figures" / p
        d.mkdir(parents=True)
        status = "differs" if p == "vfr" else "exact"
        (d / "claims.csv").write_text(
            (ROOT / "figures" / "classification_bias" / "claims.csv").read_text(encoding="utf-8").splitlines()[0]
            + "\n",
            encoding="utf-8",
        )
        cols = (d / "claims.csv").read_text(encoding="utf-8").strip().split(",")
        row = {c: "" for c in cols} | {"claim": "x", "status": status}
        (d / "claims.csv").write_text(",".join(cols) + "\n" + ",".join(row[c] for c in cols) + "\n", encoding="utf-8")
        nb = tmp_path / "nbs" / "papers" / p / "01.ipynb"
        nb.parent.mkdir(parents=True)
        cells = [
            {"cell_type": "markdown", "metadata": {}, "source": ["# t\n", "This notebook reproduces Table 4.\n"]},
            {"cell_type": "markdown", "metadata": {}, "source": ["Run `make reproduce` first."]},
            {"cell_type": "code", "metadata": {}, "source": ["# reproduces nothing: code is not read"], "outputs": []},
        ]
        nb.write_text(
            json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8"
        )
    got = notebook_overclaims(tmp_path)
    assert [(Path(nb).parts[-2], n, p) for nb, n, p, _ in got] == [("vfr", 2, "vfr")]


def test_the_chapter_ledger_covers_every_published_value():
    "The chapter notebook recomputes every value of its paper file; the committed claims table says so."
    df = pd.read_csv(ROOT / "figures" / CB / "claims.csv", dtype=str, keep_default_na=False)
    assert sorted(df["claim"]) == sorted(published_values(CB)["id"])
    assert set(df["inputs"]) == {"authors' data"}


def test_runs_index_shows_each_papers_scoreboard(tmp_path):
    "runs/index.html carries the per-status counts of each paper's claims.csv (issue 25)."
    from fairlib.runindex import build_index

    fig = tmp_path / "figures" / "classification_bias"
    fig.mkdir(parents=True)
    rows = pd.DataFrame({"claim": ["a", "b", "c"], "status": ["exact", "exact", "differs"]})
    rows.to_csv(fig / "claims.csv", index=False)
    nb = tmp_path / "01_chapter.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    done = [
        dict(
            paper="classification_bias",
            stem="01_chapter",
            output=nb,
            final_fig_dir=str(fig),
            params=dict(profile="quick", fig_dir=str(fig)),
            seconds=1.0,
            finished="2026-12-03 12:00:00",
        )
    ]
    html = build_index(done, tmp_path / "index.html").read_text()
    i = html.index("Reproduction ledger")
    board = html[i : html.index("</table>", i)]
    assert "<td>3</td><td>2</td><td>0</td><td>1</td><td>0</td><td>0</td>" in board
