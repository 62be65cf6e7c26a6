"""`fairlib audit`: a CSV or Parquet file of UCI Adult in, the text of `print(fl.audit(...))` out, the JSON and the HTML
report written, and one clear line (exit status 1) or argparse's usage error (exit status 2) for bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import fairlib as fl
from fairlib import cli
from fairlib.audit import AuditResult
from fairlib.handbook import load_adult


@pytest.fixture(scope="module")
def adult():
    "UCI Adult with a deterministic rule as the classifier: y_pred = age > 40 and at least a bachelor's degree."
    df = load_adult()
    df["y_pred"] = ((df.age > 40) & (df.education_num >= 13)).astype(int)
    df["pred_text"] = df.y_pred.map({1: ">50K", 0: "<=50K"})
    return df


@pytest.fixture(scope="module")
def files(adult, tmp_path_factory):
    d = tmp_path_factory.mktemp("adult")
    adult.to_csv(d / "adult.csv", index=False)
    adult.to_parquet(d / "adult.parquet")
    return d


def run_main(args, capsys):
    rc = cli.main(["audit", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_csv_prints_exactly_the_audit_text(adult, files, capsys):
    rc, out, err = run_main(
        [
            files / "adult.csv",
            "--y-true",
            "high_income",
            "--y-pred",
            "y_pred",
            "--sensitive",
            "race",
            "sex",
        ],
        capsys,
    )
    assert rc == 0 and err == ""
    assert (
        out
        == str(fl.audit("high_income", "y_pred", sensitive_features=["race", "sex"], data=adult))
        + "\n"
    )


def test_pos_label_one_on_a_numeric_column_is_the_number_one(adult, files, capsys):
    rc, out, _ = run_main(
        [
            files / "adult.csv",
            "--y-true",
            "high_income",
            "--y-pred",
            "y_pred",
            "--sensitive",
            "sex",
            "--pos-label",
            "1",
        ],
        capsys,
    )
    assert rc == 0
    assert (
        out
        == str(fl.audit("high_income", "y_pred", sensitive_features="sex", data=adult, pos_label=1))
        + "\n"
    )
    # labelled 1 = above $50K, so the audit with positive label 1 equals the 0/1 audit
    assert (
        out == str(fl.audit("high_income", "y_pred", sensitive_features="sex", data=adult)) + "\n"
    )


def test_json_round_trips_and_equals_the_audit(adult, files, tmp_path, capsys):
    path = tmp_path / "result.json"
    args = [
        files / "adult.csv",
        "--y-true",
        "income",
        "--pos-label",
        ">50K",
        "--y-pred",
        "pred_text",
    ]
    args += [
        "--sensitive",
        "race",
        "--min-support",
        "500",
        "--vfr",
        "--n-resamples",
        "60",
        "--seed",
        "3",
        "--json",
        path,
    ]
    rc, out, err = run_main(args, capsys)
    assert rc == 0 and "wrote" in err
    direct = fl.audit(
        "income",
        "pred_text",
        sensitive_features="race",
        data=adult,
        pos_label=">50K",
        min_support=500,
        vfr=True,
        n_resamples=60,
        seed=3,
    )
    assert out == str(direct) + "\n"
    back = AuditResult.from_json(path)
    pd.testing.assert_frame_equal(back.metrics, direct.metrics)
    pd.testing.assert_frame_equal(back.groups, direct.groups)
    assert json.loads(back.to_json()) == json.loads(direct.to_json())
    assert (
        back.excluded == direct.excluded == {"Amer-Indian-Eskimo": 470, "Other": 406}
    )  # UCI Adult's race counts


def test_html_report_is_written(files, tmp_path, capsys):
    out = tmp_path / "report.html"
    args = [
        files / "adult.csv",
        "--y-true",
        "high_income",
        "--y-pred",
        "y_pred",
        "--sensitive",
        "sex",
        "--out",
        out,
    ]
    rc, _, err = run_main(args, capsys)
    assert rc == 0 and f"wrote {out}" in err
    html = out.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and "</html>" in html


def _command():
    "The installed `fairlib` script beside this interpreter, else `python -m fairlib.cli`."
    script = Path(sys.executable).parent / "fairlib"
    return [str(script)] if script.exists() else [sys.executable, "-m", "fairlib.cli"]


def test_parquet_file_in_a_real_process(adult, files):
    args = [
        "audit",
        str(files / "adult.parquet"),
        "--y-true",
        "income",
        "--pos-label",
        ">50K",
        "--y-pred",
        "pred_text",
    ]
    args += ["--sensitive", "race", "sex", "--vfr", "--n-resamples", "40"]
    p = subprocess.run(_command() + args, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    direct = fl.audit(
        "income",
        "pred_text",
        sensitive_features=["race", "sex"],
        data=adult,
        pos_label=">50K",
        vfr=True,
        n_resamples=40,
    )
    assert p.stdout == str(direct) + "\n"


def test_csv_from_standard_input_in_a_real_process(adult, files):
    text = (files / "adult.csv").read_text()
    args = ["audit", "-", "--y-true", "high_income", "--y-pred", "y_pred", "--sensitive", "race"]
    p = subprocess.run(_command() + args, input=text, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert (
        p.stdout
        == str(fl.audit("high_income", "y_pred", sensitive_features="race", data=adult)) + "\n"
    )


def test_a_bad_column_in_a_real_process_is_one_line_without_traceback(files):
    args = [
        "audit",
        str(files / "adult.csv"),
        "--y-true",
        "high_income",
        "--y-pred",
        "y_pred",
        "--sensitive",
        "rase",
    ]
    p = subprocess.run(_command() + args, capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and p.stdout == ""
    assert (
        p.stderr == "fairlib audit: --sensitive: no column 'rase' in DATA; did you mean 'race'?\n"
    )


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "empty.csv").write_text("")
    (d / "header.csv").write_text("y,yhat,g\n")
    (d / "junk.parquet").write_text("this is not a parquet file\n")
    (d / "latin.csv").write_bytes(b"y,yhat,g\n1,0,\xff\xfe\n")
    (d / "table.xlsx").write_text("y\n1\n")
    (d / "folder.csv").mkdir()
    return d


DATA_ERRORS = [  # (file, extra arguments, words the one stderr line must hold besides the path)
    ("missing.csv", [], ["no such file"]),
    ("empty.csv", [], ["is empty"]),
    ("header.csv", [], ["no rows"]),
    ("junk.parquet", [], ["cannot be read as Parquet"]),
    ("latin.csv", [], ["cannot be read as CSV"]),
    ("table.xlsx", [], ["unknown file type"]),
    ("folder.csv", [], ["folder"]),
]


@pytest.mark.parametrize("name,extra,words", DATA_ERRORS, ids=[e[0] for e in DATA_ERRORS])
def test_unusable_files_exit_1_with_one_line(bad_files, capsys, name, extra, words):
    rc, out, err = run_main(
        [bad_files / name, "--y-true", "y", "--y-pred", "yhat", "--sensitive", "g", *extra], capsys
    )
    assert rc == 1 and out == ""
    assert (
        err.endswith("\n")
        and err.count("\n") == 1
        and err.startswith(f"fairlib audit: DATA '{bad_files / name}'")
    )
    for w in words:
        assert w in err


COLUMN_ERRORS = [  # (arguments after DATA, words the one stderr line must hold)
    (
        ["--y-true", "incme", "--y-pred", "y_pred", "--sensitive", "race"],
        ["--y-true", "'incme'", "'income'"],
    ),
    (
        ["--y-true", "high_income", "--y-pred", "ypred", "--sensitive", "race"],
        ["--y-pred", "'ypred'", "'y_pred'"],
    ),
    (
        ["--y-true", "high_income", "--y-pred", "y_pred", "--sensitive", "race", "gender"],
        ["--sensitive", "'gender'"],
    ),
    (
        [
            "--y-true",
            "high_income",
            "--y-pred",
            "y_pred",
            "--y-prob",
            "score",
            "--sensitive",
            "sex",
        ],
        ["--y-prob", "'score'"],
    ),
    (
        ["--y-true", "high_income", "--y-pred", "age", "--sensitive", "sex"],
        ["--y-pred", "'age'", "binary"],
    ),
    (
        ["--y-true", "income", "--y-pred", "pred_text", "--sensitive", "sex"],
        ["--y-true", "--pos-label"],
    ),
    (
        [
            "--y-true",
            "high_income",
            "--y-pred",
            "y_pred",
            "--sensitive",
            "sex",
            "--pos-label",
            "yes",
        ],
        ["--pos-label", "'yes'", "'high_income'"],
    ),
    (
        ["--y-true", "income", "--y-pred", "pred_text", "--sensitive", "sex", "--pos-label", ">50"],
        ["--pos-label", "'>50'", ">50K"],
    ),
    (
        ["--y-true", "high_income", "--y-pred", "y_pred", "--sensitive", "sex", "--pos-label", "2"],
        ["--pos-label", "2"],
    ),
    (
        ["--y-true", "income", "--y-pred", "y_pred", "--sensitive", "sex", "--pos-label", ">50K"],
        ["--y-pred", "--y-true"],
    ),
    (
        ["--y-true", "high_income", "--y-pred", "y_pred", "--y-prob", "age", "--sensitive", "sex"],
        ["--y-prob", "[0, 1]"],
    ),
]


@pytest.mark.parametrize(
    "args,words", COLUMN_ERRORS, ids=lambda v: "_".join(v) if isinstance(v, list) else None
)
def test_bad_columns_and_labels_exit_1_with_one_line_naming_them(files, capsys, args, words):
    rc, out, err = run_main([files / "adult.csv", *args], capsys)
    assert rc == 1 and out == ""
    assert err.startswith("fairlib audit: ") and err.count("\n") == 1
    for w in words:
        assert w in err, err


def test_an_audit_input_error_names_the_option(tmp_path, capsys):
    "A FairlibInputError from fl.audit (here: a label column with a missing value) in the command line's words."
    f = tmp_path / "gap.csv"
    pd.DataFrame({"y": [1, 0, None, 1], "yhat": [1, 0, 1, 1], "g": list("aabb")}).to_csv(
        f, index=False
    )
    rc, _, err = run_main([f, "--y-true", "y", "--y-pred", "yhat", "--sensitive", "g"], capsys)
    assert rc == 1 and err.count("\n") == 1 and err.startswith("fairlib audit: --y-true: ")


def test_unwritable_json_path_exits_1(files, tmp_path, capsys):
    (tmp_path / "a_file").write_text("x")
    args = [
        files / "adult.csv",
        "--y-true",
        "high_income",
        "--y-pred",
        "y_pred",
        "--sensitive",
        "sex",
    ]
    rc, _, err = run_main([*args, "--json", tmp_path / "a_file" / "r.json"], capsys)
    # refused before anything is read: the folder it would go in is a file
    assert (
        rc == 1
        and err.startswith("fairlib audit: --json: ")
        and "is a file" in err
        and "r.json" in err
    )
    assert err.count("\n") == 1


def test_parquet_without_pyarrow_names_the_extra(files, capsys, monkeypatch):
    def no_engine(*a, **k):
        raise ImportError("Unable to find a usable engine; tried using: 'pyarrow', 'fastparquet'.")

    monkeypatch.setattr(cli.pd, "read_parquet", no_engine)
    rc, _, err = run_main(
        [
            files / "adult.parquet",
            "--y-true",
            "high_income",
            "--y-pred",
            "y_pred",
            "--sensitive",
            "sex",
        ],
        capsys,
    )
    assert (
        rc == 1
        and err
        == "fairlib audit: DATA reading Parquet needs pyarrow: pip install fairlib[parquet]\n"
    )


USAGE_ERRORS = [  # argparse's usage errors: exit status 2, the last line names the argument
    (["--y-pred", "y_pred", "--sensitive", "sex"], "--y-true"),
    (["--y-true", "high_income", "--y-pred", "y_pred"], "--sensitive"),
    (
        [
            "--y-true",
            "high_income",
            "--y-pred",
            "y_pred",
            "--sensitive",
            "sex",
            "--n-resamples",
            "0",
        ],
        "--n-resamples",
    ),
    (
        [
            "--y-true",
            "high_income",
            "--y-pred",
            "y_pred",
            "--sensitive",
            "sex",
            "--min-support",
            "-1",
        ],
        "--min-support",
    ),
    (
        ["--y-true", "high_income", "--y-pred", "y_pred", "--sensitive", "sex", "--seed", "x"],
        "--seed",
    ),
    (
        ["--y-true", "high_income", "--y-pred", "y_pred", "--sensitive", "sex", "--colour"],
        "--colour",
    ),
]


@pytest.mark.parametrize("args,flag", USAGE_ERRORS, ids=[u[1] for u in USAGE_ERRORS])
def test_usage_errors_exit_2_naming_the_argument(files, capsys, args, flag):
    with pytest.raises(SystemExit) as e:
        cli.main(["audit", str(files / "adult.csv"), *args])
    assert e.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        last.startswith(("fairlib audit: error:", "fairlib: error:")) and flag in last
    )  # unknown options: the top parser


def test_help_shows_an_example_and_the_defaults(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["audit", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "example" in out and "fairlib audit adult.csv --y-true income --pos-label '>50K'" in out
    for default in ("default 30", "default 500", "default 0"):
        assert default in out


def test_reproduce_keeps_its_options(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["reproduce", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--profile", "--paper", "--no-progress", "--no-resume", "--no-write-back"):
        assert opt in out
