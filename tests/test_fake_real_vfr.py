"""The whole VFR paper (notebooks 00..08) on the fake "real" Texas-100X file (tests/fixtures/fake_real/, see
make_fake_real.py there), read through the real loader (setting FAIRLIB_TEXAS100X_CSV), with the smoke
profile's parameters and the runner's own plan (one shared work_dir and fig_dir for the paper, as
`fairlib reproduce` passes them). Every table and figure of the paper must render on real-schema data, and
every written output (tables, figures' captions, executed notebooks) is scanned by
`fairlib.report.scan_for_small_cells` for counts of 1..10, identifier columns and the THCIC ids of the tiny sites.
"""

import os
from pathlib import Path

import pytest

from fairlib.cli import plan_run, run_notebook
from fairlib.report import scan_for_small_cells

FAKE = Path(__file__).resolve().parent / "fixtures" / "fake_real"
TINY_SITES = ("731999",)  # 999999 is the pooled code of the codebook, not one hospital


@pytest.mark.slow
def test_vfr_paper_runs_on_the_fake_real_csv_and_leaks_no_small_cell(tmp_path):
    jobs = plan_run("smoke", "vfr", runs_dir=tmp_path)
    stems = [j["stem"] for j in jobs]
    assert stems[:2] == ["00_methods", "01_cohort"] and "08_report" in stems, stems
    env = {"FAIRLIB_TEXAS100X_CSV": str(FAKE / "texas100x.csv")}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        for j in jobs:  # in order: later notebooks read what earlier ones wrote to work_dir
            assert j["params"]["work_dir"] == jobs[0]["params"]["work_dir"]
            run_notebook(j, progress=False)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    fig = Path(jobs[0]["params"]["fig_dir"])
    written = {p.name for p in fig.rglob("*")}
    for t in (
        "table3",
        "table4",
        "table5",
        "table6",
        "table7",
    ):  # every VFR table renders from the real CSV ...
        assert any(n.lower().startswith(t) for n in written), (t, sorted(written))
    for f in ("figure2", "figure3", "figure4", "figure5"):  # ... and every figure
        assert any(n.lower().startswith(f) for n in written), (f, sorted(written))
    found = scan_for_small_cells(tmp_path, identifiers=set(TINY_SITES))
    report = "\n".join(f"  {r.file}: {r.kind} {r.column!s} = {r.value}" for r in found.itertuples())
    assert found.empty, "leaks:\n" + report
