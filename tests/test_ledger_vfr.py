"""The VFR-Audit reproduction ledger: every published value is claimed by exactly one paper notebook, and the rows a
notebook recomputes from the paper's own printed numbers reproduce them."""

import ast
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from fairlib.ledger import claim
from fairlib.published import published_values

NBS = Path(__file__).resolve().parents[1] / "nbs" / "papers" / "vfr"
DERIVED = "# ledger: arithmetic on the paper's own printed numbers"


def _cells(nb: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"]


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
            assert any(re.match(p, i) for i in ids), f"{nb.stem}: pattern {p!r} matches no published id"


@pytest.mark.parametrize("nb", sorted(NBS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_recomputed_rows_reproduce_the_printed_values(nb):
    "Arithmetic on the paper's own numbers (a share, a difference, a range) must give its printed value exactly."
    cells = [s for s in _cells(nb) if s.startswith(DERIVED)]
    for src in cells:
        ns: dict = {}
        exec(compile(src, f"{nb.stem}:derived", "exec"), ns)
        assert ns["derived"], f"{nb.stem}: empty derived table"
        for i, (v, how) in ns["derived"].items():
            r = claim("vfr", i, v, reason=how)
            assert r["status"] == "exact", f"{nb.stem}: {i} recomputed as {v!r} ({how}), printed {r['published']}"


def test_worked_statuses_on_a_small_table():
    "A qualitative claim computed from a small Table 7-like frame, on the twin and on the authors' data."
    t7 = pd.DataFrame({"protocol": ["a", "b"], "di_pass": [4, 3]})
    holds = bool((t7.di_pass == 4).all())  # "B4 passes all four DI thresholds" on every protocol: it does not here
    assert holds is False
    r = claim("vfr", "table7.single_split.all_4_di", holds, inputs="synthetic twin", shape=holds)
    assert (r["status"], r["shape_check"]) == ("method only", "fails")
    r = claim("vfr", "table7.single_split.all_4_di", bool(t7.di_pass.iloc[0] == 4), inputs="synthetic twin", shape=True)
    assert (r["status"], r["shape_check"]) == ("method only", "holds")
    assert claim("vfr", "table7.single_split.all_4_di", True)["status"] == "exact"
    assert claim("vfr", "table7.single_split.all_4_di", False, reason="x")["status"] == "differs"
    # B3 -> B4 lowers the mean VFR: a twin's numbers are never compared, only the direction is reported
    s = pd.Series({"B3": 0.09, "B4": 0.12})
    r = claim("vfr", "eq2.b3_vs_b4.B4.mean_vfr", s["B4"], inputs="synthetic twin", shape=bool(s["B4"] < s["B3"]))
    assert (r["status"], r["shape_check"]) == ("method only", "fails")


LEDGER_IMPORT = "from fairlib.vfr.claims import RERUN, ledger_rows"


def _ledger_notebooks() -> list[Path]:
    return [nb for nb in sorted(NBS.glob("*.ipynb")) if _claimed(nb)]


def test_every_ledger_notebook_writes_its_own_part_with_the_library_rows():
    "The row rules live once, in fairlib.vfr.claims; each notebook writes its own part under its own name."
    for nb in _ledger_notebooks():
        src = [s for s in _cells(nb) if LEDGER_IMPORT in s]
        assert len(src) == 1, f"{nb.stem}: {len(src)} ledger cells"
        assert "def ledger_rows(" not in "".join(_cells(nb)), f"{nb.stem} defines its own ledger_rows"
        assert f'NB = "{nb.stem}"' in src[0], f"{nb.stem}: writes its rows under another name"
        assert "real=REAL" in src[0] and "collect_claims(P, fig_dir=fig_dir)" in src[0], nb.stem


@pytest.mark.parametrize("real", [False, True])
def test_ledger_rows_on_small_inputs(real):
    from fairlib.vfr.claims import ledger_rows

    def rows(*a):
        return ledger_rows(*a, real=real, source="a test cohort")

    k = [r"method\.k_hosp$"]
    r = rows(k, {"method.k_hosp": 20}, {}, {"method.k_hosp": True})[0]
    assert (r["status"], r["shape_check"]) == (("exact", "holds") if real else ("method only", "holds"))
    r = rows(k, {"method.k_hosp": 19}, {}, {"method.k_hosp": False})[0]
    assert (r["status"], r["shape_check"]) == (("differs", "fails") if real else ("method only", "fails"))
    r = rows(k, {"method.k_hosp": None}, {}, {})[0]  # not computed by this run: the command that would
    assert r["status"] == "not reproducible here" and "fairlib reproduce" in r["command"]
    r = rows([r"eq5\.vfr_stable\.lo$"], {}, {"eq5.vfr_stable.lo": (21, "a minimum")}, {})[0]
    assert (r["status"], r["inputs"]) == ("exact", "authors' data")  # the paper's own numbers, whatever the cohort
    with pytest.raises(ValueError, match="claimed but not computed"):
        rows(k, {}, {}, {})
    with pytest.raises(ValueError, match="computed but not claimed"):
        rows(k, {"method.k_hosp": 20, "method.kappa_min": 0.4}, {}, {})
