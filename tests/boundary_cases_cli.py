"""Boundary campaign, the `fairlib audit` command: ambiguous files, group codes, labels, output paths and flags.

Each case runs the command on files written for it and is judged by the contract: a clear refusal (exit 1 with one
line, or argparse's exit 2, naming the option, column or file; input files untouched) or a legitimate answer checked
against plain pandas on the same records (`boundary_harness.oracle_groups` / `oracle_metrics`) or against the files.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boundary_harness import (
    CliErr,
    CliVal,
    cli,
    frame,
    oracle_groups,
    oracle_metrics,
    same,
    stability_oracle,
)  # noqa: E402


def records(n=400, seed=1, codes=("a", "b"), p=None, rates=(0.6, 0.35), col="g") -> pd.DataFrame:
    "Labels, predictions with a selection-rate gap between the first code and the others, and a group column."
    rng = np.random.default_rng(seed)
    g = rng.choice(list(codes), n, p=p)
    y = rng.integers(0, 2, n)
    yhat = rng.binomial(1, np.where(g == codes[0], rates[0], rates[1]))
    return pd.DataFrame({"y": y, "yhat": yhat, col: g})


BASE = records()
CSV = BASE.to_csv(index=False)
ARGS = ("audit", "{d}/in.csv", "--y-true", "y", "--y-pred", "yhat", "--sensitive", "g")
TEXT = lambda df: df.to_csv(index=False)  # noqa: E731


def _raw(path, sens):
    "The records read back with plain pandas, sensitive columns as text (the oracle's reading)."
    sens = [sens] if isinstance(sens, str) else list(sens)
    return pd.read_csv(path, dtype={c: str for c in sens}, keep_default_na=False)


def agrees(
    df_or_name="in.csv", sens="g", y="y", yhat="yhat", pos=None, min_support=30, json_name="r.json"
):
    """A check: the JSON the command wrote has the per-group sizes and rates, and the metric values, that plain pandas
    computes from the same records (sensitive codes as text, every distinct code a group)."""

    def check(run):
        df = _raw(run.path(df_or_name), sens) if isinstance(df_or_name, str) else df_or_name
        want = oracle_groups(df, y, yhat, sens, pos)
        d = run.json(json_name)
        got = frame(d, "groups", sens)
        cols = [sens] if isinstance(sens, str) else list(sens)
        got.index = got[cols].astype(str).agg("/".join, axis=1)
        if sorted(got.index) != sorted(want.index):
            return False
        for c in ("support", "selection_rate", "TPR", "FPR", "PPV"):
            for gname in want.index:
                if not same(
                    got.loc[gname, c] if got.loc[gname, c] is not None else np.nan,
                    want.loc[gname, c],
                ):
                    return False
        m = frame(d, "metrics", sens).set_index("metric")
        for k, v in oracle_metrics(want, min_support).items():
            if k in m.index and not same(
                m.loc[k, "value"] if m.loc[k, "value"] is not None else np.nan, v
            ):
                return False
        return run.unchanged(df_or_name) if isinstance(df_or_name, str) else True

    return check


def run_args(*extra, data="{d}/in.csv", sens=("g",)):
    return ("audit", data, "--y-true", "y", "--y-pred", "yhat", "--sensitive", *sens, *extra)


def J(*extra, **kw):
    "The base command writing {d}/r.json, plus `extra`."
    return run_args("--json", "{d}/r.json", *extra, **kw)


def untouched(run):
    "Refused and nothing damaged: every input file as before, no new file."
    return run.unchanged() and run.no_new_files()


def metrics_of(run, name="r.json"):
    return frame(run.json(name), "metrics").set_index("metric")


def verdict_follows(run, metric, threshold, direction, absval=True):
    "The verdict of `metric` is the one its value (checked independently by `agrees`) gets against `threshold`."
    m = metrics_of(run).loc[metric]
    x = abs(m.value) if absval else m.value
    want = "Pass" if (x >= threshold if direction == ">=" else x <= threshold) else "Fail"
    return same(m.threshold, threshold) and m.verdict == want


def all_undefined(run):
    m = metrics_of(run)
    return (
        bool(m.value.isna().all()) and set(m.verdict) == {"Undefined"} and m.reason.map(bool).all()
    )


def stabilities_follow(run):
    "Every stability the command wrote is the one statsmodels' Clopper-Pearson bound gives its flips."
    d = run.json()
    K = d["vfr_settings"]["n_resamples"]
    fr = d["metrics"]["__frame__"]
    m = pd.DataFrame(fr["data"], columns=fr["columns"])  # every view's rows
    for r in m.itertuples():
        nu = r.vfr_n_undefined or 0
        auditable = r.value is not None and nu <= 0.05 * K
        want = stability_oracle(np.nan if r.vfr is None else r.vfr, K - nu, auditable)
        if r.vfr_stability != want:
            return False
    return True


def with_dup_header(header: str, rows: int = 40, seed=2) -> str:
    rng = np.random.default_rng(seed)
    k = len(header.split(","))
    body = "\n".join(",".join(str(int(v)) for v in rng.integers(0, 2, k)) for _ in range(rows))
    return header + "\n" + body + "\n"


def _codes(codes, n=300, seed=3, p=None):
    return records(n=n, seed=seed, codes=codes, p=p)


def _issue_leading_zeros() -> pd.DataFrame:
    "The issue's class: site codes '007' and '7' are two sites (here '007' 30%, '7' 20%, '12' 50%)."
    return _codes(("007", "7", "12"), n=600, p=[0.3, 0.2, 0.5], seed=11)


def _hash_agrees(run):
    "The header's sha256 is the SHA-256 of the canonical JSON of header (without sha256) and payload (hashlib only)."
    d = run.json()
    h = d["__fairlib__"]
    body = {k: v for k, v in d.items() if k != "__fairlib__"}
    rest = {k: v for k, v in h.items() if k != "sha256"}
    text = json.dumps(
        {"header": rest, "payload": body}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return (
        h["schema"] == 2
        and h["form"] == "full"
        and hashlib.sha256(text.encode()).hexdigest() == h["sha256"]
    )


def _html_agrees(run):
    "A standalone page naming every audited metric with the verdict its JSON value gets."
    html = run.path("r.html").read_text(encoding="utf-8")
    m = metrics_of(run)
    ok = (
        html.lstrip().lower().startswith("<!doctype html")
        and "</html>" in html
        and "http://" not in html.lower()
    )
    return ok and all(k in html for k in m.index) and all(v in html for v in set(m.verdict))


def _link(name, target):
    return lambda d: (d / name).symlink_to(d / target)


def _hard(name, target):
    return lambda d: os.link(d / target, d / name)


def _parquet_dup(d):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table([[1, 0] * 20, [1, 1] * 20, ["a", "b"] * 20], names=["y", "yhat", "y"]),
        d / "in.parquet",
    )


def _folder(d):
    (d / "out").mkdir()


def _stale_json(d):
    (d / "r.json").write_text("old")


def _sub_file(d):
    (d / "blocker").write_text("a file, not a folder")


D = "{d}/in.csv"
CASES = [
    # ---- the shape of the file -----------------------------------------------------------------------------------
    (
        "single-row",
        cli(*ARGS, files={"in.csv": "y,yhat,g\n1,0,a\n"}),
        CliErr("single record", check=untouched),
    ),
    ("header-only", cli(*ARGS, files={"in.csv": "y,yhat,g\n"}), CliErr("no rows")),
    (
        "header-is-data-ints",
        cli(*run_args(sens=("1",)), files={"in.csv": "1,0,1\n0,1,0\n1,1,1\n0,0,1\n"}),
        CliErr("looks like data"),
    ),
    (
        "header-is-data-floats",
        cli(
            "audit",
            D,
            "--y-true",
            "0.5",
            "--y-pred",
            "1",
            "--sensitive",
            "2",
            files={"in.csv": "0.5,1,2\n1,0,1\n"},
        ),
        CliErr("looks like data"),
    ),
    (
        "header-is-data-signed",
        cli(
            "audit",
            D,
            "--y-true",
            "-1",
            "--y-pred",
            "2e3",
            "--sensitive",
            "+3",
            files={"in.csv": "-1,2e3,+3\n1,0,a\n0,1,b\n"},
        ),
        CliErr("looks like data"),
    ),
    (
        "header-partly-numeric-ok",
        cli(
            "audit",
            D,
            "--y-true",
            "y",
            "--y-pred",
            "1",
            "--sensitive",
            "g",
            "--json",
            "{d}/r.json",
            files={"in.csv": TEXT(BASE.rename(columns={"yhat": "1"}))},
        ),
        CliVal(agrees(yhat="1")),
    ),
    (
        "dup-header-sensitive",
        cli(*ARGS, files={"in.csv": with_dup_header("y,yhat,g,g")}),
        CliErr("'g' 2 times"),
    ),
    (
        "dup-header-label",
        cli(*ARGS, files={"in.csv": with_dup_header("y,y,yhat,g")}),
        CliErr("'y' 2 times"),
    ),
    (
        "dup-header-unused",
        cli(*ARGS, files={"in.csv": with_dup_header("y,yhat,g,x,x")}),
        CliErr("'x' 2 times"),
    ),
    (
        "dup-header-three",
        cli(*ARGS, files={"in.csv": with_dup_header("g,y,yhat,g,g")}),
        CliErr("'g' 3 times"),
    ),
    (
        "dup-header-mangled-name-ok",  # a real column called g.1 next to g is not a repeat
        cli(*J(), files={"in.csv": TEXT(BASE.assign(**{"g.1": BASE.g}))}),
        CliVal(agrees()),
    ),
    (
        "case-distinct-headers",
        cli(*J(), files={"in.csv": TEXT(BASE.assign(G="x"))}),
        CliVal(agrees()),
    ),
    (
        "bom-header",
        cli(*J(), files={"in.csv": b"\xef\xbb\xbf" + CSV.encode()}),
        CliVal(agrees(BASE)),
    ),
    ("crlf-lines", cli(*J(), files={"in.csv": CSV.replace("\n", "\r\n")}), CliVal(agrees(BASE))),
    ("semicolons", cli(*ARGS, files={"in.csv": CSV.replace(",", ";")}), CliErr("--y-true", "'y'")),
    ("trailing-blank-lines", cli(*J(), files={"in.csv": CSV + "\n\n\n"}), CliVal(agrees(BASE))),
    (
        "ragged-row",
        cli(*ARGS, files={"in.csv": CSV + "1,0,a,extra\n"}),
        CliErr("DATA", "cannot be read"),
    ),
    (
        "short-row-missing-group",
        cli(*ARGS, files={"in.csv": CSV + "1,0\n"}),
        CliErr("--sensitive", "missing"),
    ),
    ("empty-file", cli(*ARGS, files={"in.csv": ""}), CliErr("is empty")),
    ("blank-lines-only", cli(*ARGS, files={"in.csv": "\n\n\n"}), CliErr("DATA")),
    ("binary-garbage", cli(*ARGS, files={"in.csv": bytes(range(256)) * 4}), CliErr("DATA")),
    (
        "latin1-bytes",
        cli(*ARGS, files={"in.csv": "y,yhat,g\n1,0,Zürich\n0,1,Genève\n".encode("latin-1")}),
        CliErr("DATA"),
    ),
    (
        "gzip-csv",
        cli(*J(data="{d}/in.csv.gz"), files={"in.csv.gz": gzip.compress(CSV.encode())}),
        CliVal(agrees(BASE)),
    ),
    ("txt-suffix", cli(*J(data="{d}/in.txt"), files={"in.txt": CSV}), CliVal(agrees("in.txt"))),
    (
        "xlsx-suffix",
        cli(*run_args(data="{d}/in.xlsx"), files={"in.xlsx": CSV}),
        CliErr("unknown file type"),
    ),
    ("folder-as-data", cli(*run_args(data="{d}/out"), setup=_folder), CliErr("folder")),
    ("missing-file", cli(*ARGS), CliErr("no such file")),
    ("stdin-csv", cli(*J(data="-"), stdin=CSV), CliVal(agrees(BASE))),
    ("stdin-empty", cli(*run_args(data="-"), stdin=""), CliErr("DATA")),
    (
        "stdin-single-row",
        cli(*run_args(data="-"), stdin="y,yhat,g\n1,1,a\n"),
        CliErr("single record"),
    ),
    (
        "stdin-dup-header",
        cli(*run_args(data="-"), stdin=with_dup_header("y,yhat,g,g")),
        CliErr("'g' 2 times"),
    ),
    (
        "parquet-int-codes",
        cli(*J(data="{d}/in.parquet"), files={"in.parquet": records(codes=(1, 2))}),
        CliVal(agrees(records(codes=(1, 2)))),
    ),
    (
        "parquet-dup-names",
        cli(*run_args(data="{d}/in.parquet"), setup=_parquet_dup),
        CliErr("DATA", "'y'"),
    ),
    (
        "parquet-junk",
        cli(*run_args(data="{d}/in.parquet"), files={"in.parquet": "not parquet"}),
        CliErr("DATA"),
    ),
    ("two-records", cli(*J(), files={"in.csv": "y,yhat,g\n1,0,a\n0,1,b\n"}), CliVal(all_undefined)),
    # ---- group codes are categories ------------------------------------------------------------------------------
    (
        "leading-zeros-007-7",
        cli(*J(), files={"in.csv": TEXT(_issue_leading_zeros())}),
        CliVal(lambda r: agrees()(r) and len(frame(r.json(), "groups")) == 3),
    ),
    (
        "codes-01-1-001",
        cli(*J(), files={"in.csv": TEXT(_codes(("01", "1", "001")))}),
        CliVal(agrees()),
    ),
    ("codes-1.0-1", cli(*J(), files={"in.csv": TEXT(_codes(("1.0", "1")))}), CliVal(agrees())),
    (
        "codes-1e3-1000",
        cli(*J(), files={"in.csv": TEXT(_codes(("1e3", "1000")))}),
        CliVal(agrees()),
    ),
    (
        "codes-true-True-TRUE",
        cli(*J(), files={"in.csv": TEXT(_codes(("true", "True", "TRUE")))}),
        CliVal(agrees()),
    ),
    ("codes-space-a", cli(*J(), files={"in.csv": TEXT(_codes((" a", "a")))}), CliVal(agrees())),
    (
        "codes-NA-is-a-code",
        cli(*J(), files={"in.csv": TEXT(_codes(("NA", "EU")))}),
        CliVal(agrees()),
    ),
    (
        "codes-nan-text",
        cli(*J(), files={"in.csv": TEXT(_codes(("nan", "None")))}),
        CliVal(agrees()),
    ),
    ("codes-numbers", cli(*J(), files={"in.csv": TEXT(_codes((1, 2, 10)))}), CliVal(agrees())),
    (
        "codes-unicode",
        cli(*J(), files={"in.csv": TEXT(_codes(("Bâle", "Zürich")))}),
        CliVal(agrees()),
    ),
    (
        "codes-with-commas",
        cli(*J(), files={"in.csv": TEXT(_codes(("a,b", "c")))}),
        CliVal(agrees()),
    ),
    (
        "empty-group-cell",
        cli(*ARGS, files={"in.csv": CSV + "1,0,\n"}),
        CliErr("--sensitive", "missing"),
    ),
    (
        "intersection-leading-zeros",
        cli(
            *J(sens=("g", "sex")),
            files={
                "in.csv": TEXT(_codes(("007", "7")).assign(sex=np.resize(["F", "M", "M"], 300)))
            },
        ),
        CliVal(agrees(sens=["g", "sex"])),
    ),
    (
        "intersection-labels-collide",
        cli(
            *run_args(sens=("g", "h")),
            files={"in.csv": "y,yhat,g,h\n" + "1,0,a/b,c\n0,1,a,b/c\n" * 20},
        ),
        CliErr("--sensitive", "read the same"),
    ),
    ("one-group", cli(*J(), files={"in.csv": TEXT(BASE.assign(g="a"))}), CliVal(all_undefined)),
    (
        "every-group-tiny",
        cli(*J(), files={"in.csv": TEXT(BASE.assign(g=range(len(BASE))))}),
        CliVal(all_undefined),
    ),
    (
        "min-support-0-keeps-a-tiny-group",
        cli(*J("--min-support", "0"), files={"in.csv": CSV + "1,1,c\n"}),
        CliVal(agrees(min_support=0)),
    ),
    (
        "sensitive-twice",
        cli(*run_args(sens=("g", "g")), files={"in.csv": CSV}),
        CliErr("--sensitive"),
    ),
    ("sensitive-misspelt", cli(*run_args(sens=("grp",)), files={"in.csv": CSV}), CliErr("'grp'")),
    (
        "sensitive-numeric-name",
        cli(*J(sens=("3",)), files={"in.csv": TEXT(BASE.rename(columns={"g": "3"}))}),
        CliVal(agrees(sens="3")),
    ),
    (
        "sensitive-is-the-label",
        cli(*J(sens=("y",)), files={"in.csv": CSV}),
        CliErr("--sensitive", "'y'"),
    ),
    # ---- labels ------------------------------------------------------------------------------------------------------
    (
        "labels-yes-no",
        cli(
            *J("--pos-label", "yes"),
            files={
                "in.csv": TEXT(
                    BASE.assign(
                        y=BASE.y.map({1: "yes", 0: "no"}), yhat=BASE.yhat.map({1: "yes", 0: "no"})
                    )
                )
            },
        ),
        CliVal(agrees(pos="yes")),
    ),
    (
        "labels-yes-no-without-pos",
        cli(*ARGS, files={"in.csv": TEXT(BASE.assign(y=BASE.y.map({1: "yes", 0: "no"})))}),
        CliErr("--y-true"),
    ),
    (
        "pos-label-absent",
        cli(*run_args("--pos-label", "2"), files={"in.csv": CSV}),
        CliErr("--pos-label"),
    ),
    ("y-three-values", cli(*ARGS, files={"in.csv": CSV + "2,1,a\n"}), CliErr("--y-true")),
    ("yhat-three-values", cli(*ARGS, files={"in.csv": CSV + "1,2,a\n"}), CliErr("--y-pred")),
    ("y-missing-value", cli(*ARGS, files={"in.csv": CSV + ",1,a\n"}), CliErr("--y-true")),
    (
        "y-floats",
        cli(*J(), files={"in.csv": TEXT(BASE.assign(y=BASE.y.astype(float)))}),
        CliVal(agrees(BASE)),
    ),
    (
        "y-bools",
        cli(
            *J(),
            files={"in.csv": TEXT(BASE.assign(y=BASE.y.astype(bool), yhat=BASE.yhat.astype(bool)))},
        ),
        CliVal(agrees(BASE)),
    ),
    (
        "pos-label-1.0-on-floats",
        cli(*J("--pos-label", "1.0"), files={"in.csv": CSV}),
        CliVal(agrees(BASE)),
    ),
    (
        "y-prob-above-1",
        cli(
            *run_args("--y-prob", "p"),
            files={"in.csv": TEXT(BASE.assign(p=np.linspace(0, 1.5, len(BASE))))},
        ),
        CliErr("--y-prob"),
    ),
    (
        "y-prob-ok",
        cli(
            *J("--y-prob", "p"), files={"in.csv": TEXT(BASE.assign(p=np.linspace(0, 1, len(BASE))))}
        ),
        CliVal(lambda r: agrees()(r) and "Cal" in metrics_of(r).index),
    ),
    (
        "y-prob-misspelt",
        cli(*run_args("--y-prob", "pp"), files={"in.csv": CSV}),
        CliErr("--y-prob", "'pp'"),
    ),
    # ---- outputs never destroy inputs ------------------------------------------------------------------------------
    (
        "json-is-input",
        cli(*run_args("--json", D), files={"in.csv": CSV}),
        CliErr("--json", check=untouched),
    ),
    (
        "out-is-input",
        cli(*run_args("--out", D), files={"in.csv": CSV}),
        CliErr("--out", check=untouched),
    ),
    (
        "json-is-input-dot",
        cli(*run_args("--json", "{d}/./in.csv"), files={"in.csv": CSV}),
        CliErr("--json", check=untouched),
    ),
    (
        "json-is-input-dotdot",
        cli(*run_args("--json", "{d}/sub/../in.csv"), files={"in.csv": CSV, "sub/x": "x"}),
        CliErr("--json", check=untouched),
    ),
    (
        "json-symlink-to-input",
        cli(
            *run_args("--json", "{d}/link.json"),
            files={"in.csv": CSV},
            setup=_link("link.json", "in.csv"),
        ),
        CliErr("--json", check=untouched),
    ),
    (
        "out-hardlink-to-input",
        cli(
            *run_args("--out", "{d}/hard.html"),
            files={"in.csv": CSV},
            setup=_hard("hard.html", "in.csv"),
        ),
        CliErr("--out", check=untouched),
    ),
    (
        "data-symlink-out-is-target",
        cli(
            *run_args("--out", D, data="{d}/link.csv"),
            files={"in.csv": CSV},
            setup=_link("link.csv", "in.csv"),
        ),
        CliErr("--out", check=untouched),
    ),
    (
        "json-equals-out",
        cli(*run_args("--json", "{d}/r.x", "--out", "{d}/r.x"), files={"in.csv": CSV}),
        CliErr("--out", "--json", check=untouched),
    ),
    (
        "json-equals-out-via-link",
        cli(
            *run_args("--json", "{d}/r.json", "--out", "{d}/l.html"),
            files={"in.csv": CSV},
            setup=_link("l.html", "r.json"),
        ),
        CliErr("--out", "--json", check=lambda r: r.unchanged()),
    ),
    (
        "json-empty",
        cli(*run_args("--json", ""), files={"in.csv": CSV}),
        CliErr("--json", check=untouched),
    ),
    (
        "out-empty",
        cli(*run_args("--out", ""), files={"in.csv": CSV}),
        CliErr("--out", check=untouched),
    ),
    (
        "json-spaces",
        cli(*run_args("--json", "  "), files={"in.csv": CSV}),
        CliErr("--json", check=untouched),
    ),
    (
        "json-dash",
        cli(*run_args("--json", "-"), files={"in.csv": CSV}),
        CliErr("--json", check=untouched),
    ),
    (
        "json-folder",
        cli(*run_args("--json", "{d}/out"), files={"in.csv": CSV}, setup=_folder),
        CliErr("--json", "folder"),
    ),
    (
        "json-is-input-refused-before-reading",  # the data are broken too: the output is named, so it came first
        cli(*run_args("--json", D), files={"in.csv": "y,y,g\n1,0,a\n"}),
        CliErr("--json", check=untouched),
    ),
    (
        "stdin-out-dash",
        cli(*run_args("--out", "-", data="-"), stdin=CSV),
        CliErr("--out", check=lambda r: r.no_new_files()),
    ),
    (
        "json-in-new-folder",
        cli(*run_args("--json", "{d}/new/deeper/r.json"), files={"in.csv": CSV}),
        CliVal(lambda r: agrees(json_name="new/deeper/r.json")(r)),
    ),
    ("json-over-stale-file", cli(*J(), files={"in.csv": CSV}, setup=_stale_json), CliVal(agrees())),
    (
        "json-parent-is-a-file",
        cli(*run_args("--json", "{d}/blocker/r.json"), files={"in.csv": CSV}, setup=_sub_file),
        CliErr("--json", "cannot write", check=lambda r: r.unchanged() and r.no_new_files()),
    ),
    (
        "input-untouched-after-a-run",
        cli(*J("--out", "{d}/r.html"), files={"in.csv": CSV}),
        CliVal(agrees()),
    ),
    ("json-header-and-hash", cli(*J(), files={"in.csv": CSV}), CliVal(_hash_agrees)),
    ("html-report", cli(*J("--out", "{d}/r.html"), files={"in.csv": CSV}), CliVal(_html_agrees)),
    (
        "no-temporary-files-left",
        cli(*J("--out", "{d}/r.html"), files={"in.csv": CSV}),
        CliVal(lambda r: sorted(r.after) == ["in.csv", "r.html", "r.json"]),
    ),
    # ---- flags -----------------------------------------------------------------------------------------------------
    (
        "version",
        cli("--version"),
        CliVal(lambda r: r.out.strip() == f"fairlib {__import__('fairlib').__version__}"),
    ),
    (
        "metrics-two",
        cli(*J("--metrics", "DI", "SPD"), files={"in.csv": CSV}),
        CliVal(lambda r: agrees()(r) and list(metrics_of(r).index) == ["DI", "SPD"]),
    ),
    (
        "metrics-comma-list",
        cli(*J("--metrics", "DI,SPD,EOD"), files={"in.csv": CSV}),
        CliVal(lambda r: agrees()(r) and list(metrics_of(r).index) == ["DI", "SPD", "EOD"]),
    ),
    (
        "metrics-unknown",
        cli(*run_args("--metrics", "NOPE"), files={"in.csv": CSV}),
        CliErr("--metrics"),
    ),
    (
        "metrics-twice",
        cli(*run_args("--metrics", "DI", "DI"), files={"in.csv": CSV}),
        CliErr("--metrics"),
    ),
    ("metrics-empty", cli(*run_args("--metrics", ","), files={"in.csv": CSV}), CliErr("--metrics")),
    ("metrics-no-value", cli(*run_args("--metrics"), files={"in.csv": CSV}), CliErr("--metrics")),
    (
        "metrics-cal-without-prob",
        cli(*run_args("--metrics", "Cal"), files={"in.csv": CSV}),
        CliErr("--y-prob"),
    ),
    (
        "thresholds-one",
        cli(*J("--thresholds", "DI=0.9"), files={"in.csv": CSV}),
        CliVal(lambda r: agrees()(r) and verdict_follows(r, "DI", 0.9, ">=", absval=False)),
    ),
    (
        "thresholds-comma",
        cli(*J("--thresholds", "DI=0.9,SPD=0.3"), files={"in.csv": CSV}),
        CliVal(
            lambda r: (
                verdict_follows(r, "DI", 0.9, ">=", False) and verdict_follows(r, "SPD", 0.3, "<=")
            )
        ),
    ),
    (
        "thresholds-repeated-flag",
        cli(*J("--thresholds", "DI=0.5", "--thresholds", "EOD=0.05"), files={"in.csv": CSV}),
        CliVal(
            lambda r: (
                verdict_follows(r, "DI", 0.5, ">=", False) and verdict_follows(r, "EOD", 0.05, "<=")
            )
        ),
    ),
    (
        "thresholds-no-value",
        cli(*run_args("--thresholds", "DI"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-not-a-number",
        cli(*run_args("--thresholds", "DI=abc"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-no-name",
        cli(*run_args("--thresholds", "=0.5"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-twice",
        cli(*run_args("--thresholds", "DI=0.9,DI=0.8"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-unknown",
        cli(*run_args("--thresholds", "NOPE=0.1"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-nan",
        cli(*run_args("--thresholds", "DI=nan"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-inf",
        cli(*run_args("--thresholds", "SPD=inf"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-di-above-1",
        cli(*run_args("--thresholds", "DI=1.5"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-di-0",
        cli(*run_args("--thresholds", "DI=0"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-negative",
        cli(*run_args("--thresholds", "SPD=-0.1"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "thresholds-theil-large",
        cli(*J("--thresholds", "Theil=5"), files={"in.csv": CSV}),
        CliVal(lambda r: verdict_follows(r, "Theil", 5.0, "<=", absval=False)),
    ),
    (
        "thresholds-not-audited",
        cli(*run_args("--metrics", "DI", "--thresholds", "SPD=0.2"), files={"in.csv": CSV}),
        CliErr("--thresholds"),
    ),
    (
        "vfr-n-resamples-1",
        cli(*run_args("--vfr", "--n-resamples", "1"), files={"in.csv": CSV}),
        CliErr("--n-resamples"),
    ),
    (
        "vfr-n-resamples-2",
        cli(*run_args("--vfr", "--n-resamples", "2"), files={"in.csv": CSV}),
        CliErr("--n-resamples"),
    ),
    (
        "vfr-n-resamples-28",
        cli(*run_args("--vfr", "--n-resamples", "28"), files={"in.csv": CSV}),
        CliErr("--n-resamples"),
    ),
    (
        "vfr-n-resamples-29",
        cli(*J("--vfr", "--n-resamples", "29"), files={"in.csv": CSV}),
        CliVal(lambda r: agrees()(r) and stabilities_follow(r)),
    ),
    (
        "n-resamples-0",
        cli(*run_args("--n-resamples", "0"), files={"in.csv": CSV}),
        CliErr("--n-resamples"),
    ),
    (
        "n-resamples-5-without-vfr",
        cli(*J("--n-resamples", "5"), files={"in.csv": CSV}),
        CliVal(agrees()),
    ),
    (
        "size-plan-n-resamples-10",
        cli(*run_args("--size-plan", "--n-resamples", "10"), files={"in.csv": CSV}),
        CliErr("--n-resamples"),
    ),
    (
        "vfr-default-clear-gap",
        cli(
            *J("--vfr", "--n-resamples", "200"),
            files={"in.csv": TEXT(records(n=2000, rates=(0.8, 0.2)))},
        ),
        CliVal(
            lambda r: (
                stabilities_follow(r) and metrics_of(r).loc["SPD", "vfr_stability"] == "Stable"
            )
        ),
    ),
    (
        "vfr-one-group-never-stable",
        cli(*J("--vfr", "--n-resamples", "40"), files={"in.csv": TEXT(BASE.assign(g="a"))}),
        CliVal(lambda r: set(metrics_of(r).vfr_stability) == {"Undefined"}),
    ),
    (
        "vfr-reason-names-the-excluded-group",
        cli(*J("--vfr", "--n-resamples", "40"), files={"in.csv": CSV + "1,1,tiny\n" * 12}),
        CliVal(lambda r: all("tiny (n=12)" in x for x in metrics_of(r).vfr_reason)),
    ),
    ("seed-negative", cli(*run_args("--seed", "-1"), files={"in.csv": CSV}), CliErr("--seed")),
    (
        "min-support-negative",
        cli(*run_args("--min-support", "-1"), files={"in.csv": CSV}),
        CliErr("--min-support"),
    ),
    (
        "min-support-above-all",
        cli(*J("--min-support", "1000"), files={"in.csv": CSV}),
        CliVal(all_undefined),
    ),
    ("unknown-option", cli(*run_args("--colour"), files={"in.csv": CSV}), CliErr("--colour")),
    ("no-subcommand", cli(), CliErr("fairlib")),
    ("audit-without-data", cli("audit"), CliErr("DATA", "--y-true")),
]
