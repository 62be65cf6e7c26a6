"""The harness of the boundary campaign (issue 34): the contracts of `tests/campaign_cases.py` (`Err`, `Undef`, `Val`)
plus a command-line form (`CliErr`, `CliVal`), a fifth outcome "crash", and the independent oracles the cases judge
legitimate answers by.

A case is `(id, call, contract)`, as in `campaign_cases.py`; every `tests/boundary_cases_*.py` module holds a list
`CASES` of them. `classify(call, contract)` sorts an outcome into

- clear: the refusal (or the undefined value) the contract asks for, naming the argument, option, column or file;
- legitimate: a value that an independent computation (or a check of the files) confirms;
- obscure: a refusal that does not say what is wrong (or any refusal where a value is due);
- silent: a value where a refusal or NaN is due, a wrong value, or a refusal that still damaged a file;
- crash: an exception that is not a refusal (TypeError, KeyError, IndexError, AttributeError, ... raised inside
  fairlib), or a command that ends with a traceback or an exit status other than 0, 1 and 2.

Command-line cases run `fairlib.cli.main` in this process (one import, no subprocess per case) on files written into a
fresh folder; `{d}` in an argument is that folder. Everything imported from fairlib is imported inside the calls, so
`python tools/campaign.py --boundary` can tally the same cases on an older checkout (PYTHONPATH).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import math
import os
import shutil
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from campaign_cases import Err, Undef, Val, _isnan, value_of  # noqa: E402, F401  (the shared contract types)

KINDS = ("clear", "legitimate", "obscure", "silent", "crash")
CRASH_TYPES = (
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    ZeroDivisionError,
    NameError,
    AssertionError,
    RecursionError,
    OverflowError,
    NotImplementedError,
    RuntimeError,
    StopIteration,
    UnboundLocalError,
    MemoryError,
)


@dataclass
class CliErr:
    "A clear refusal: exit 1 with one stderr line (or argparse's exit 2) naming one of `words`; `check(run)` holds."

    words: tuple
    check: object = None

    def __init__(self, *words, check=None):
        self.words, self.check = words, check


@dataclass
class CliVal:
    "A legitimate answer: exit 0 and `check(run)` true (an independent computation or a file check)."

    check: object


@dataclass
class CliRun:
    "What one `fairlib ...` command did: exit status, output, the folder and its files before and after."

    rc: object
    out: str
    err: str
    dir: Path
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)
    exc: BaseException | None = None

    def path(self, name) -> Path:
        return self.dir / name

    def json(self, name="r.json") -> dict:
        return json.loads((self.dir / name).read_text())

    def unchanged(self, *names) -> bool:
        "The named input files (default: all that were there before) hold the same bytes as before the command."
        names = names or tuple(self.before)
        return all(self.after.get(n) == self.before[n] for n in names)

    def no_new_files(self) -> bool:
        return set(self.after) <= set(self.before)


_ROOT = Path(tempfile.mkdtemp(prefix="fairlib-boundary-"))
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)


def _snapshot(d: Path) -> dict:
    out = {}
    for p in sorted(d.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(d))] = p.read_bytes()
    return out


def cli(*argv, files=None, stdin=None, setup=None):
    """A call: write `files` ({name: str | bytes | DataFrame}) into a fresh folder, run `setup(folder)` (links and
    the like), then `fairlib <argv>` with `{d}` replaced by the folder; returns a CliRun."""

    def call():
        d = Path(tempfile.mkdtemp(dir=_ROOT))
        for name, content in (files or {}).items():
            p = d / name
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, pd.DataFrame):
                if name.endswith((".parquet", ".pq")):
                    content.to_parquet(p, index=False)
                else:
                    content.to_csv(p, index=False)
            elif isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content)
        if setup is not None:
            setup(d)
        before = _snapshot(d)
        args = [str(a).replace("{d}", str(d)) for a in argv]
        from fairlib import cli as fcli

        out, err, rc, exc = io.StringIO(), io.StringIO(), None, None
        old_stdin = sys.stdin
        sys.stdin = io.StringIO(stdin if stdin is not None else "")
        try:
            with (
                warnings.catch_warnings(),
                contextlib.redirect_stdout(out),
                contextlib.redirect_stderr(err),
            ):
                warnings.simplefilter("ignore")
                try:
                    rc = fcli.main(args)
                except SystemExit as e:
                    rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except Exception as e:  # noqa: BLE001 -- a traceback out of the command is what "crash" means
            exc = e
            err.write(traceback.format_exc())
        finally:
            sys.stdin = old_stdin
        return CliRun(rc, out.getvalue(), err.getvalue(), d, before, _snapshot(d), exc)

    return call


def _from_inside_fairlib(e: BaseException) -> bool:
    """The exception passed through a fairlib module, and is not Python refusing the call itself (an unknown keyword:
    an argument an older fairlib does not have)."""
    if isinstance(e, TypeError) and (
        "unexpected keyword argument" in str(e) or "positional argument" in str(e)
    ):
        return False
    return any(
        f"{os.sep}fairlib{os.sep}" in f.filename for f in traceback.extract_tb(e.__traceback__)
    )


def _names(text: str, args) -> bool:
    return any(
        f"`{a}`" in text
        or f"`{a}[" in text
        or f"'{a}'" in text
        or f" {a} " in f" {text} "
        or f"{a}=" in text
        for a in args
    )


def _classify_cli(run: CliRun, contract) -> tuple[str, str]:
    if run.exc is not None or "Traceback (most recent call last)" in run.err:
        return "crash", (run.err.strip().splitlines() or ["?"])[-1][:200]
    if run.rc not in (0, 1, 2):
        return "crash", f"exit status {run.rc!r}"
    lines = run.err.strip().splitlines()
    last = lines[-1] if lines else ""
    if isinstance(contract, CliErr):
        if run.rc == 0:
            return "silent", f"exit 0: {run.out.strip().splitlines()[:1]}"
        if contract.check is not None and not _ok(contract.check, run):
            return "silent", f"refused (exit {run.rc}: {last[:120]}) but the file check failed"
        one_line = run.rc == 2 or len(lines) == 1
        named = any(w in last for w in contract.words)
        return ("clear" if one_line and named else "obscure"), f"exit {run.rc}: {last[:160]}"
    if run.rc != 0:
        return "obscure", f"exit {run.rc} where an answer is due: {last[:160]}"
    try:
        ok = bool(contract.check(run))
    except Exception as e:  # noqa: BLE001
        return "silent", f"exit 0 but the check raised {type(e).__name__}: {e}"[:200]
    return ("legitimate" if ok else "silent"), "exit 0" + (
        "" if ok else f": the check failed ({run.out[:80]!r})"
    )


def _ok(check, run) -> bool:
    try:
        return bool(check(run))
    except Exception:  # noqa: BLE001
        return False


def _show(r) -> str:
    "A short text of a result for the detail column (never raises: an older result's repr may)."
    try:
        return str(value_of(r))[:80]
    except Exception as e:  # noqa: BLE001
        return f"a {type(r).__name__} (its text raised {type(e).__name__})"


def classify(call, contract) -> tuple[str, str]:
    "(kind, detail), kind one of KINDS."
    if isinstance(contract, (CliErr, CliVal)):
        return _classify_cli(call(), contract)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call()
    except Exception as e:  # noqa: BLE001 -- classifying every outcome is the point
        msg = f"{type(e).__name__}: {e}"[:300]
        refusal = isinstance(e, (ValueError, OSError)) or type(e).__name__ == "FairlibInputError"
        if not refusal and isinstance(e, CRASH_TYPES) and _from_inside_fairlib(e):
            return "crash", msg
        if type(contract).__name__ == "Err":
            return ("clear" if refusal and _names(str(e), contract.args) else "obscure"), msg
        if type(contract).__name__ == "Undef":
            return ("clear" if refusal and "argument `" in str(e) else "obscure"), msg
        return "obscure", msg
    if type(contract).__name__ == "Err":
        return "silent", f"returned {_show(r)}"
    if type(contract).__name__ == "Undef":
        try:
            v = contract.extract(r) if contract.extract else value_of(r)
        except Exception as e:  # noqa: BLE001
            return "silent", f"extract raised {type(e).__name__}: {e}"[:200]
        return ("legitimate" if _isnan(v) else "silent"), f"returned {str(v)[:80]}"
    try:
        ok = bool(contract.check(r))
    except Exception as e:  # noqa: BLE001
        return "silent", f"check raised {type(e).__name__}: {e}"[:200]
    return ("legitimate" if ok else "silent"), f"returned {_show(r)}"


def boundary_modules() -> list[Path]:
    return sorted(Path(__file__).resolve().parent.glob("boundary_cases_*.py"))


def all_cases() -> list:
    "Every case of every tests/boundary_cases_*.py module, ids prefixed by the module's topic."
    import importlib.util

    out = []
    for p in boundary_modules():
        spec = importlib.util.spec_from_file_location(p.stem, p)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        topic = p.stem.removeprefix("boundary_cases_")
        out += [(f"{topic}:{cid}", call, contract) for cid, call, contract in mod.CASES]
    return out


def tally(outcomes) -> dict:
    "Counts per kind (every kind listed, 0 included)."
    counts = dict.fromkeys(KINDS, 0)
    for kind in outcomes:
        counts[kind] += 1
    return counts


def tally_table(rows) -> str:
    """The Markdown table of the tally per topic and in total, from (case id, kind) rows: the table
    docs/reliability.md shows and tests/test_boundary_campaign.py compares with it."""
    topics = sorted({cid.split(":", 1)[0] for cid, _ in rows})
    head = "| surface | cases | " + " | ".join(KINDS) + " |"
    lines = [head, "|" + " --- |" * (len(KINDS) + 2)]
    for t in [*topics, "total"]:
        ks = [k for cid, k in rows if t == "total" or cid.split(":", 1)[0] == t]
        c = tally(ks)
        name = "**total**" if t == "total" else t
        lines.append(f"| {name} | {len(ks)} | " + " | ".join(str(c[k]) for k in KINDS) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------------
# independent oracles: plain pandas/numpy/scipy on the raw records, never fairlib


def oracle_groups(df, y, yhat, sens, pos=None) -> pd.DataFrame:
    "Per group (the text of the codes, '/'-joined for intersections): support and the rates, from the raw records."
    d = pd.DataFrame({"y": df[y], "yh": df[yhat]})
    if pos is not None:
        d["y"], d["yh"] = (d.y == pos).astype(int), (d.yh == pos).astype(int)
    sens = [sens] if isinstance(sens, str) else list(sens)
    d["g"] = df[sens].astype(str).agg("/".join, axis=1)
    rows = {}
    for g, x in d.groupby("g", sort=True):
        tp, fp = int(((x.y == 1) & (x.yh == 1)).sum()), int(((x.y == 0) & (x.yh == 1)).sum())
        p, n = int((x.y == 1).sum()), int((x.y == 0).sum())
        rows[g] = dict(
            support=len(x),
            selection_rate=x.yh.mean(),
            TPR=tp / p if p else np.nan,
            FPR=fp / n if n else np.nan,
            PPV=tp / (tp + fp) if tp + fp else np.nan,
        )
    return pd.DataFrame(rows).T


def oracle_metrics(groups: pd.DataFrame, min_support=30) -> dict:
    "DI, SPD, EOpp, EOD, PP over the groups with support >= min_support (NaN with fewer than two)."
    g = groups[groups.support >= min_support]
    if len(g) < 2:
        return dict.fromkeys(("DI", "SPD", "EOpp", "EOD", "PP"), np.nan)

    def spread(c):
        v = g[c].astype(float)
        return np.nan if v.isna().any() else v.max() - v.min()

    sr = g.selection_rate.astype(float)
    return dict(
        DI=sr.min() / sr.max() if sr.max() > 0 else np.nan,
        SPD=spread("selection_rate"),
        EOpp=spread("TPR"),
        EOD=np.nan
        if np.isnan(spread("TPR")) or np.isnan(spread("FPR"))
        else max(spread("TPR"), spread("FPR")),
        PP=spread("PPV"),
    )


def same(a, b, tol=1e-9) -> bool:
    "Equal numbers to `tol`, or both undefined."
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol * max(1.0, abs(b))


def frame(d: dict, name: str, view=None) -> pd.DataFrame:
    """A table of a saved result's JSON, read with pandas alone; with `view` (the audited attributes), only the rows
    of that view when the table has one row per view (the intersection of all attributes by default)."""
    fr = d[name]["__frame__"]
    df = pd.DataFrame(fr["data"], columns=fr["columns"])
    if "view" in df.columns:
        names = view if view is not None else d.get("sensitive_features", [])
        want = " × ".join(map(str, [names] if isinstance(names, str) else names))
        df = df[df["view"] == want].reset_index(drop=True)
    return df


def cp_upper(k: int, n: int, level: float = 0.95) -> float:
    "One-sided Clopper-Pearson upper bound of a proportion k/n (statsmodels' two-sided interval at 2(1 - level))."
    from statsmodels.stats.proportion import proportion_confint

    return (
        1.0 if k >= n else float(proportion_confint(k, n, alpha=2 * (1 - level), method="beta")[1])
    )


def stability_oracle(vfr, n_defined, auditable=True, tau=0.10) -> str:
    "The stability of a cell from its flips, by the rule of the reliability page, with statsmodels' bound."
    if not auditable or vfr is None or (isinstance(vfr, float) and math.isnan(vfr)):
        return "Undefined"
    k = round(vfr * n_defined)
    if k / n_defined > tau:
        return "Unstable"
    return "Stable" if cp_upper(k, n_defined) <= tau else "Undetermined"
