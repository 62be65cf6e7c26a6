"""A fake "real" data run (issue 9 §1): the VFR cohort and mFARM benchmark notebooks on small invented files
in the real schemas (tests/fixtures/fake_real/, see make_fake_real.py there), read through the real loaders
(settings FAIRLIB_TEXAS100X_CSV / FAIRLIB_MIMIC_ROOT), then every written table (CSV and Markdown) and the
executed notebooks are scanned by `fairlib.report.scan_for_small_cells` for counts of 1..10 in count columns,
printed `n=5`, identifier columns and the identifiers of the fake records (MIMIC subject/stay/hadm ids, the
THCIC ids of the tiny sites). A finding fails the test with the file, cell and column that leaks.
"""

import os
from pathlib import Path

import pandas as pd
import pytest

from fairlib.config import repo_root
from fairlib.report import scan_for_small_cells

FAKE = Path(__file__).resolve().parent / "fixtures" / "fake_real"
TINY_SITES = (731999,)  # 999999 is the pooled code of the codebook, not one hospital


def _ids():
    ids = set(map(str, TINY_SITES))
    m = FAKE / "mimic"
    for rel, cols in {
        "ed/edstays.csv.gz": ("subject_id", "stay_id", "hadm_id"),
        "hosp/admissions.csv.gz": ("subject_id", "hadm_id"),
    }.items():
        df = pd.read_csv(m / rel)
        for c in cols:
            ids |= {str(int(v)) for v in df[c].dropna()}
    return {i for i in ids if len(i) >= 6}  # short ids would match ordinary numbers


def _run(nb, out, params, env):
    import papermill as pm

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        pm.execute_notebook(
            str(repo_root() / nb),
            str(out),
            parameters=params,
            kernel_name="python3",
            language="python",
            cwd=str(repo_root()),
            progress_bar=False,
        )
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.mark.slow
def test_fake_real_run_shows_no_small_cell_and_no_identifier(tmp_path):
    env = {
        "FAIRLIB_TEXAS100X_CSV": str(FAKE / "texas100x.csv"),
        "FAIRLIB_MIMIC_ROOT": str(FAKE / "mimic"),
    }
    errors = []
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
        try:
            _run(
                nb,
                tmp_path / paper / Path(nb).name,
                dict(params, profile="smoke", fig_dir=str(fig), work_dir=str(work)),
                env,
            )
        except Exception as e:  # a notebook that cannot run on real-schema data is a failure too
            errors.append(
                f"{nb} did not run on the fake real files: {type(e).__name__}: {str(e)[:400]}"
            )
    found = scan_for_small_cells(tmp_path, identifiers=_ids())
    report = "\n".join(f"  {r.file}: {r.kind} {r.column!s} = {r.value}" for r in found.itertuples())
    assert not errors and found.empty, "\n".join(errors) + ("\nleaks:\n" + report if report else "")


def test_fake_real_files_are_in_the_real_schemas():
    from fairlib.vfr.cohort import load_cohort
    from fairlib.mfarm.benchmark import load_benchmark

    cohort, label = load_cohort(str(FAKE / "texas100x.csv"))
    assert label.startswith("REAL") and len(cohort) == 6000
    assert (cohort["race"].value_counts() < 11).any()  # a small cell to protect
    b = load_benchmark("ed_triage", source=str(FAKE / "mimic"))
    assert "real credentialed" in b.source
    assert ((b.flow["excluded"] > 0) & (b.flow["excluded"] < 11)).any()
