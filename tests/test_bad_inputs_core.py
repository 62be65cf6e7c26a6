r"""Bad inputs to the shared helpers, settings, report writers and the runner (issue 9 §3).

Each case asserts the error type (FairlibInputError, a ValueError) and that the message names the argument
(`argument \`x\``), never a raw numpy / pandas / configparser / yaml error and never a silent result.
"""

import numpy as np
import pandas as pd
import pytest
import yaml

from fairlib import cli, config, core, report
from fairlib.core import FairlibInputError

T3 = pd.DataFrame({"attribute": ["race"] * 3, "group": ["a", "b", "c"], "n": [5, 500, 700]})


def _dup():
    d = pd.DataFrame([[1, 2]], columns=["n", "n"])
    return d


def _fig():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f, _ = plt.subplots()
    return f


CASES = [
    # --- core helpers ---------------------------------------------------------------------------------------
    ("as_1d-none", lambda tmp: core.as_1d(None, "y_true", "f"), "y_true", "required"),
    (
        "as_1d-2d",
        lambda tmp: core.as_1d(np.zeros((2, 3)), "y_true", "f"),
        "y_true",
        "1-dimensional",
    ),
    ("as_1d-empty", lambda tmp: core.as_1d([], "y_true", "f"), "y_true", "empty"),
    (
        "binary-three-classes",
        lambda tmp: core.check_binary([0, 1, 2], "y_pred", "f"),
        "y_pred",
        "binary",
    ),
    ("binary-nan", lambda tmp: core.check_binary([0, 1, np.nan], "y_pred", "f"), "y_pred", "NaN"),
    (
        "binary-strings",
        lambda tmp: core.check_binary(["a", "b"], "y_pred", "f"),
        "y_pred",
        "binary",
    ),
    (
        "probability-above-1",
        lambda tmp: core.check_probability([0.2, 1.5], "y_prob", "f"),
        "y_prob",
        "[0, 1]",
    ),
    (
        "probability-nan",
        lambda tmp: core.check_probability([0.2, np.nan], "y_prob", "f"),
        "y_prob",
        "NaN",
    ),
    (
        "lengths-differ",
        lambda tmp: core.check_same_length("f", y_true=[1, 0], y_pred=[1]),
        "y_pred",
        "lengths differ",
    ),
    ("int-string", lambda tmp: core.check_int("5", "n_resamples", "f"), "n_resamples", "int"),
    ("int-zero", lambda tmp: core.check_int(0, "n_resamples", "f"), "n_resamples", ">= 1"),
    ("int-negative", lambda tmp: core.check_int(-4, "n", "f"), "n", ">= 1"),
    ("int-fraction", lambda tmp: core.check_int(2.5, "n", "f"), "n", "int"),
    ("int-bool", lambda tmp: core.check_int(True, "n", "f"), "n", "int"),
    (
        "float-nan",
        lambda tmp: core.check_float(np.nan, "alpha", "f", lo=0, hi=1),
        "alpha",
        "finite",
    ),
    (
        "float-out-of-range",
        lambda tmp: core.check_float(2, "alpha", "f", lo=0, hi=1),
        "alpha",
        "[0, 1]",
    ),
    (
        "float-string",
        lambda tmp: core.check_float("0.1", "alpha", "f", lo=0, hi=1),
        "alpha",
        "number",
    ),
    (
        "choice-unknown",
        lambda tmp: core.check_choice("x", "method", ["fast", "exact"], "f"),
        "method",
        "one of",
    ),
    ("seed-string", lambda tmp: core.check_rng("abc"), "seed", "Generator"),
    ("seed-float", lambda tmp: core.check_rng(1.5), "seed", "Generator"),
    (
        "largest-remainder-negative",
        lambda tmp: core.largest_remainder([1, -1], 5),
        "sizes",
        "non-negative",
    ),
    (
        "interval-level",
        lambda tmp: core.percentile_interval([1, 2, 3], confidence_level=1.5),
        "confidence_level",
        "(0, 1)",
    ),
    ("file-digest-missing", lambda tmp: core.file_digest(tmp / "nope"), "path", "no such file"),
    # --- settings ---------------------------------------------------------------------------------------------
    ("setting-unknown-key", lambda tmp: config.get_setting("mimic"), "key", "unknown setting"),
    # declared constraints (fairlib.constraints) say "must be a string"; the hand-written checks said the rest
    (
        "setting-non-string-key",
        lambda tmp: config.get_setting(None),
        "key",
        ("unknown setting", "must be a string"),
    ),
    # --- report -----------------------------------------------------------------------------------------------
    ("suppress-not-a-frame", lambda tmp: report.suppress_small_cells([[1, 2]]), "df", "DataFrame"),
    (
        "suppress-duplicated-columns",
        lambda tmp: report.suppress_small_cells(_dup()),
        "df",
        "duplicated",
    ),
    (
        "suppress-unknown-count-column",
        lambda tmp: report.suppress_small_cells(T3, count_columns=["nn"]),
        "count_columns",
        "lacks",
    ),
    (
        "suppress-text-count",
        lambda tmp: report.suppress_small_cells(T3, count_columns=["group"]),
        "count_columns",
        "must hold counts",
    ),
    (
        "suppress-negative-count",
        lambda tmp: report.suppress_small_cells(T3.assign(n=[-1, 5, 9]), count_columns=["n"]),
        "count_columns",
        "negative",
    ),
    (
        "suppress-threshold-zero",
        lambda tmp: report.suppress_small_cells(T3, threshold=0),
        "threshold",
        "positive integer",
    ),
    (
        "suppress-threshold-float",
        lambda tmp: report.suppress_small_cells(T3, threshold=10.5),
        "threshold",
        "positive integer",
    ),
    (
        "suppress-unknown-group",
        lambda tmp: report.suppress_small_cells(T3, groups="attr"),
        "groups",
        "lacks",
    ),
    (
        "suppress-flow-one-column",
        lambda tmp: report.suppress_small_cells(T3, flow="n"),
        "flow",
        "pair",
    ),
    (
        "suppress-row-total-number",
        lambda tmp: report.suppress_small_cells(T3, row_total=3),
        "row_total",
        "column name",
    ),
    (
        "suppress-rate-unknown-denominator",
        lambda tmp: report.suppress_small_cells(T3.assign(r=0.5), rate_columns={"r": "m"}),
        "rate_columns",
        "lacks",
    ),
    (
        "suppress-derived-unknown",
        lambda tmp: report.suppress_small_cells(T3, derived_columns={"pct": "n"}),
        "derived_columns",
        "lacks",
    ),
    (
        "save-table-bad-name",
        lambda tmp: report.save_table(T3, "../x", fig_dir=tmp, source="SYNTHETIC"),
        "name",
        "plain file stem",
    ),
    (
        "save-table-source-not-text",
        lambda tmp: report.save_table(T3, "t", fig_dir=tmp, source=3),
        "source",
        "string",
    ),
    (
        "save-table-real-not-bool",
        lambda tmp: report.save_table(T3, "t", fig_dir=tmp, source="x", real="yes"),
        "real",
        "True, False or None",
    ),
    (
        "save-table-not-a-frame",
        lambda tmp: report.save_table({"n": [1]}, "t", fig_dir=tmp),
        "df",
        "DataFrame",
    ),
    (
        "save-figure-not-a-figure",
        lambda tmp: report.save_figure("fig", "f", fig_dir=tmp),
        "fig",
        "matplotlib Figure",
    ),
    (
        "save-figure-bad-name",
        lambda tmp: report.save_figure(_fig(), "", fig_dir=tmp),
        "name",
        "plain file stem",
    ),
    (
        "save-figure-real-small-counts",
        lambda tmp: report.save_figure(_fig(), "f", fig_dir=tmp, real=True, data=T3),
        "df",
        "small counts",
    ),
    (
        "aggregate-identifier-column",
        lambda tmp: report.check_aggregate(pd.DataFrame({"subject_id": [1], "n": [50]})),
        "df",
        "identifier",
    ),
    (
        "scan-missing-folder",
        lambda tmp: report.scan_for_small_cells(tmp / "nope"),
        "folder",
        "no such folder",
    ),
    ("real-source-not-text", lambda tmp: report.is_real_source(None), "source", "string"),
    ("paper-dirs-empty-key", lambda tmp: report.paper_dirs("", tmp, tmp), "paper", "non-empty"),
    # --- runner -----------------------------------------------------------------------------------------------
    ("plan-unknown-paper", lambda tmp: cli.plan_run("quick", "nope"), "paper", "unknown paper"),
    ("plan-unknown-profile", lambda tmp: cli.plan_run("nope"), "profile", "no parameter file"),
    (
        "profile-not-a-name",
        lambda tmp: cli.load_profile(3),
        "profile",
        ("profile name", "must be a string"),
    ),
    (
        "registry-missing-file",
        lambda tmp: cli.load_registry(tmp / "none.yaml"),
        "registry",
        "no such file",
    ),
]


@pytest.mark.parametrize(
    "call, argument, needle", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_names_the_argument(tmp_path, call, argument, needle):
    with pytest.raises(FairlibInputError) as e:
        call(tmp_path)
    assert isinstance(e.value, ValueError)
    assert f"argument `{argument}`" in str(e.value), str(e.value)
    assert any(n in str(e.value) for n in (needle if isinstance(needle, tuple) else (needle,))), (
        str(e.value)
    )


YAML_CASES = [
    ("unclosed-flow-mapping", "vfr/01_cohort: {n: 3\nvfr/02_panel: {}\n", "line 2"),
    ("tab-indentation", "vfr/01_cohort:\n\tn: 3\n", "line 2"),
    ("a-list", "- vfr/01_cohort\n", "must map"),
    ("entry-not-a-mapping", "vfr/01_cohort: 3\n", "must be a mapping"),
    ("a-scalar", "just text\n", "must map"),
]


@pytest.mark.parametrize(
    "text, needle", [c[1:] for c in YAML_CASES], ids=[c[0] for c in YAML_CASES]
)
def test_malformed_profile_yaml_names_file_and_line(tmp_path, text, needle):
    (tmp_path / "p.yaml").write_text(text)
    with pytest.raises(FairlibInputError) as e:
        cli.load_profile("p", tmp_path)
    msg = str(e.value)
    assert "argument `profile`" in msg and "p.yaml" in msg and needle in msg, msg
    assert not isinstance(e.value, yaml.YAMLError)


@pytest.mark.parametrize(
    "env, value, argument",
    [
        ("FAIRLIB_N_JOBS", "many", "n_jobs"),
        ("FAIRLIB_N_JOBS", "0", "n_jobs"),
        ("FAIRLIB_CACHEDIR", "/x", "FAIRLIB_CACHEDIR"),
    ],
    ids=["n_jobs-text", "n_jobs-zero", "unknown-env-key"],
)
def test_bad_environment_settings(monkeypatch, env, value, argument):
    monkeypatch.setenv(env, value)
    with pytest.raises(FairlibInputError) as e:
        config.get_setting("n_jobs")
    assert f"argument `{argument}`" in str(e.value)


def test_negative_seed_names_the_argument():
    with pytest.raises(FairlibInputError, match="argument `seed`"):
        core.check_rng(-1)


# ---- content_hash and cell_seed: no two different inputs share a hash (issue 24, item 5) -----------------


@pytest.mark.parametrize(
    "a, b",
    [
        ((b"a", b"bc"), (b"abbc",)),  # the example: concatenation without lengths
        ((b"ab", b"c"), (b"a", b"bc")),
        (("a", "bc"), ("ab", "c")),
        ((1,), ("1",)),
        ((1,), (1.0,)),
        ((True,), (1,)),
        (([1, 2],), ([1], 2)),
        (([b"a", b"b"],), ([b"ab"],)),
        (({"a": 1},), ({"a": "1"},)),
        ((np.array([1, 2], dtype=np.int64),), (np.array([1, 2], dtype=np.int32),)),
        ((np.zeros(4),), (np.zeros((2, 2)),)),
    ],
)
def test_content_hash_separates_parts_and_types(a, b):
    assert core.content_hash(*a) != core.content_hash(*b)


def test_content_hash_is_stable_and_deterministic():
    df = pd.DataFrame({"x": [1, 2], "y": ["a", "b"]})
    assert core.content_hash(b"a", "b", 1, df) == core.content_hash(b"a", "b", 1, df.copy())
    assert core.content_hash({"a": 1, "b": 2}) == core.content_hash(
        {"b": 2, "a": 1}
    )  # key order is not content
    assert core.content_hash([1, "a"]) == core.content_hash(
        (1, "a")
    )  # a tuple read back from JSON is a list
    assert core.content_hash(np.int64(3)) == core.content_hash(3)


def _words(ss):
    return ss.entropy, tuple(ss.generate_state(4))


def test_cell_seed_type_tags_its_key_parts():
    "cell_seed(0, 1) and cell_seed(0, '1') were one seed; so were ('a\\x1fb',) and ('a', 'b')."
    assert _words(core.cell_seed(0, 1)) != _words(core.cell_seed(0, "1"))
    assert _words(core.cell_seed(0, "a\x1fb")) != _words(core.cell_seed(0, "a", "b"))
    assert _words(core.cell_seed(0, "ab", "c")) != _words(core.cell_seed(0, "a", "bc"))
    assert _words(core.cell_seed(0, np.int64(3))) == _words(
        core.cell_seed(0, 3)
    )  # an int is an int
    assert _words(core.cell_seed(0, np.str_("m"))) == _words(core.cell_seed(0, "m"))
    assert _words(core.cell_seed(5, "x", 2)) == _words(core.cell_seed(5, "x", 2))


@pytest.mark.parametrize("key", [1.5, None, True, ("a", 1), b"x", np.float64(2.0)])
def test_cell_seed_refuses_other_key_types(key):
    with pytest.raises(FairlibInputError, match=r"argument `key`.*cell_seed"):
        core.cell_seed(0, "cell", key)
