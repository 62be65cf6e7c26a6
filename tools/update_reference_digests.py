"""Reference digests of seeded results, committed so drift across versions or machines shows.

    python tools/update_reference_digests.py          # print the current digests beside the committed ones
    python tools/update_reference_digests.py --write  # rewrite tests/fixtures/reference_digests.json

Rewrite only after a deliberate change (a new twin calibration, a renamed column, a changed algorithm),
and say so in the commit message; `tests/test_reference_digests.py` compares against the file.

A digest is the sha256 of a canonical form of the result: every float formatted with 12
significant digits (`%.12g`, so BLAS- or libm-level noise in the last bits does not break it, while any
real change does), every other value as its string, columns in order.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "reference_digests.json"
SIG_DIGITS = 12


def canonical(x):
    "A JSON-able canonical form: floats as '%.12g' strings, frames as ordered column lists."
    if isinstance(x, pd.DataFrame):
        return {
            "columns": [str(c) for c in x.columns],
            "index": canonical(list(x.index)),
            "data": [canonical(x[c].tolist()) for c in x.columns],
        }
    if isinstance(x, pd.Series):
        return canonical(x.to_frame())
    if isinstance(x, np.ndarray):
        return canonical(x.tolist())
    if isinstance(x, dict):
        return {str(k): canonical(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [canonical(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (float, np.floating)):
        return "nan" if np.isnan(x) else format(float(x), f".{SIG_DIGITS}g")
    if isinstance(x, (int, np.integer)):
        return int(x)
    if x is None or x is pd.NA or x is pd.NaT:
        return None
    return str(x)


def digest(x) -> str:
    """sha256 of the canonical JSON text, hashed here rather than with `fairlib.core.content_hash` so that a change
    to that hash's encoding does not move every reference digest (the `str:` prefix and repr keep the digests
    that content_hash gave before its parts were length-prefixed)."""
    text = json.dumps(canonical(x), sort_keys=True)
    return hashlib.sha256(f"str:{text!r}".encode()).hexdigest()


def _kw(func, **candidates):
    "Pass each keyword under the first of its names that `func` accepts (robust to the vocabulary renames)."
    params = inspect.signature(func).parameters
    out = {}
    for names, value in candidates.values():
        name = next((n for n in names if n in params), None)
        if name is None and not any(p.kind == p.VAR_KEYWORD for p in params.values()):
            raise TypeError(f"{func.__name__} accepts none of {names}")
        out[name or names[0]] = value
    return out


def texas_twin():
    from fairlib.vfr.twin import synthetic_texas100x

    df = synthetic_texas100x(
        **_kw(synthetic_texas100x, n=(("n",), 2000), seed=(("seed", "rng"), 0))
    )
    return df, {
        "rows": len(df),
        "mean_LENGTH_OF_STAY": round(float(df["LENGTH_OF_STAY"].mean()), 6),
    }


def vfr_cell():
    from fairlib.vfr.twin import synthetic_texas100x
    from fairlib.vfr.texas import prepare_cohort
    from fairlib.reliability import verdict_flip_rate

    c = prepare_cohort(synthetic_texas100x(5000, seed=1))
    y = c["los_gt3"].to_numpy().astype(int)
    yhat = (c["PAT_AGE"].to_numpy() >= 14).astype(
        int
    )  # a fixed rule: the cell depends on the bootstrap only
    kw = _kw(
        verdict_flip_rate,
        K=(("n_resamples", "K"), 200),
        N=(("resample_size", "N"), 2000),
        seed=(("seed", "rng"), 0),
    )
    r = verdict_flip_rate(y, yhat, sensitive_features=c["sex"].to_numpy(), metric="DI", **kw)
    frame = r.to_frame()
    return frame, {"value": round(float(r.value), 6)}


def agent_simulation():
    from fairlib.agent.simulate import simulate_trajectories

    s = simulate_trajectories(
        **_kw(
            simulate_trajectories,
            v=(("n_vignettes",), 16),
            r=(("n_replicates",), 10),
            seed=(("seed", "rng"), 0),
        )
    )
    t = s.trajectories
    return t, {"rows": len(t)}


def mimic_twin():
    from fairlib.mfarm.twin import synthetic_opioid_tables
    from fairlib.mfarm.twin_ed import synthetic_ed_tables

    ed = synthetic_ed_tables(
        **_kw(synthetic_ed_tables, n=(("n_stays",), 600), seed=(("seed", "rng"), 0))
    )
    op = synthetic_opioid_tables(
        **_kw(synthetic_opioid_tables, n=(("n_admissions",), 200), seed=(("seed", "rng"), 0))
    )
    tables = {**{f"ed:{k}": v for k, v in ed.items()}, **{f"opioid:{k}": v for k, v in op.items()}}
    return tables, {k: len(v) for k, v in tables.items()}


CASES = {
    "texas_twin_n2000_seed0": texas_twin,
    "vfr_cell_DI_sex_K200_N2000_seed0": vfr_cell,
    "agent_simulation_16x10_seed0": agent_simulation,
    "mimic_twin_ed600_opioid200_seed0": mimic_twin,
}


def compute(names=None) -> dict:
    out = {}
    for name, f in CASES.items():
        if names and name not in names:
            continue
        value, summary = f()
        out[name] = {"digest": digest(value), "summary": canonical(summary)}
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    now = compute()
    old = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    for k, v in now.items():
        same = old.get("cases", {}).get(k, {}).get("digest") == v["digest"]
        print(f"{'same   ' if same else 'CHANGED'} {k}: {v['digest'][:16]}  {v['summary']}")
    if "--write" in argv:
        import fairlib, platform

        doc = {
            "about": "Reference digests of seeded results; regenerate with tools/update_reference_digests.py --write "
            "after a deliberate change. Floats rounded to 12 significant digits before hashing.",
            "generated_with": {
                "fairlib": fairlib.__version__,
                "numpy": np.__version__,
                "pandas": pd.__version__,
                "python": platform.python_version(),
                "machine": platform.machine(),
            },
            "cases": now,
        }
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    main()
