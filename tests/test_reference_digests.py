"""Determinism across machines and versions (issue 9 §4): seeded results against committed reference digests.

The earlier "bit-identical twin" test compared two digests from one process; these compare against
`tests/fixtures/reference_digests.json`, written by `tools/update_reference_digests.py --write` (which also
holds the cases, so the test and the tool cannot disagree). Floats are formatted with 12 significant digits
before hashing, so noise in the last bits from BLAS/libm differences does not fail the test, while any real
change (a recalibrated twin, a new resampling order, a renamed column) does: then regenerate deliberately and
say so in the commit.

Tree models: on a 4,000-row problem, RandomForest, ExtraTrees, XGBoost (hist) and LightGBM gave
bit-identical `predict_proba` with n_jobs=1 and 2 (checked while writing this file); the panel-level
claim that two workers differ in the last bits is left to the VFR suite, which owns the panel.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "update_reference_digests", ROOT / "tools" / "update_reference_digests.py"
)
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)
COMMITTED = json.loads(ref.FIXTURE.read_text())["cases"]


@pytest.mark.parametrize("name", list(ref.CASES), ids=list(ref.CASES))
def test_seeded_result_matches_committed_digest(name):
    assert name in COMMITTED, (
        f"no committed digest for {name}: run tools/update_reference_digests.py --write"
    )
    value, summary = ref.CASES[name]()
    got = ref.digest(value)
    want = COMMITTED[name]
    assert ref.canonical(summary) == want["summary"], (
        f"{name}: summary drifted: {ref.canonical(summary)} vs {want['summary']}"
    )
    assert got == want["digest"], (
        f"{name}: digest {got[:16]} differs from the committed {want['digest'][:16]} "
        "(same summary: a change beyond 12 significant digits somewhere in the result)"
    )


def test_digest_ignores_last_bit_noise_but_not_real_changes():
    df = pd.DataFrame({"a": [0.1 + 0.2, 1 / 3, 1e-20], "b": ["x", "y", "z"]})
    noisy = df.assign(a=df["a"] * (1 + 1e-15))
    moved = df.assign(a=df["a"] * (1 + 1e-9))
    assert ref.digest(df) == ref.digest(noisy)
    assert ref.digest(df) != ref.digest(moved)
    assert ref.digest(df) != ref.digest(df[["b", "a"]])  # column order matters
    assert ref.digest({"x": np.nan}) == ref.digest({"x": float("nan")})
