"""Bad inputs to the mFARM modules (fairlib.prompts, fairlib.mfarm, fairlib.mfarm_reliability, fairlib.finetune):
each raises FairlibInputError naming the argument (never a raw numpy/pandas/scipy error, never a silent number);
undefined results carry their reason."""

import math

import numpy as np
import pandas as pd
import pytest

from fairlib.core import FairlibInputError
from fairlib import prompts as P
from fairlib import mfarm as M
from fairlib import mfarm_reliability as R
from fairlib import finetune as F

V = list(M.PROMPT_VARIANTS)


def frame(n=20, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.uniform(0.1, 0.9, (n, 13)), columns=V)


def long_scores(n=12):
    Pm = frame(n)
    return pd.DataFrame(
        [
            {
                "task": "ed_triage",
                "tier": "low",
                "case_id": f"c{i}",
                "variant": v,
                "label": i % 2,
                "p_yes": float(Pm[v].iloc[i]),
            }
            for i in range(n)
            for v in V
        ]
    )


class _Model:
    "Stands in for a torch model (finetune_lora checks its arguments before touching the model)."

    def parameters(self):
        return iter(())


class _Tok:
    "Stands in for a tokenizer."

    def encode(self, text):
        return [0]


CASES = [
    # --- fairlib.prompts
    ("instrument_unknown", lambda: P.load_instrument("mine"), "instrument"),
    (
        "prompt_table_instrument",
        lambda: P.prompt_table("ed_triage", source="synthetic", instrument="paperish"),
        "instrument",
    ),
    (
        "prompt_table_tier_set",
        lambda: P.prompt_table("ed_triage", source="synthetic", tier_set="code"),
        "tier_set",
    ),
    (
        "prompt_table_protocol",
        lambda: P.prompt_table("ed_triage", source="synthetic", protocol="some"),
        "protocol",
    ),
    ("tier_fields_task", lambda: P.tier_fields("sepsis"), "task"),
    ("tier_fields_set", lambda: P.tier_fields("ed_triage", "nope"), "tier_set"),
    ("sample_protocol_not_frame", lambda: P.sample_protocol([1, 2, 3]), "cases"),
    ("sample_protocol_no_label", lambda: P.sample_protocol(pd.DataFrame({"x": [1]})), "cases"),
    (
        "sample_protocol_too_few",
        lambda: P.sample_protocol(pd.DataFrame({"stay_id": range(10), "label": [1] * 5 + [0] * 5})),
        "n_cases",
    ),
    (
        "sample_protocol_n_bool",
        lambda: P.sample_protocol(pd.DataFrame({"label": [1, 0]}), n_cases=True),
        "n_cases",
    ),
    (
        "sample_protocol_n_str",
        lambda: P.sample_protocol(pd.DataFrame({"label": [1, 0]}), n_cases="80"),
        "n_cases",
    ),
    (
        "paper_body_unknown_field",
        lambda: P.paper_body("ed_triage", {"age": 40}, ("pain",)),
        "tier_fields",
    ),
    (
        "split_paper_prompt_foreign",
        lambda: P.split_paper_prompt("ed_triage", "Header.\n\nbody without question"),
        "prompt",
    ),
    # --- fairlib.mfarm
    ("mfarm_ks_method", lambda: M.mfarm(frame(), ks_method="approx"), "ks_method"),
    ("mfarm_wilcoxon_method", lambda: M.mfarm(frame(), wilcoxon_method="pratt"), "wilcoxon_method"),
    ("mfarm_alpha_bool", lambda: M.mfarm(frame(), alpha=True), "alpha"),
    ("mfarm_alpha_str", lambda: M.mfarm(frame(), alpha="0.05"), "alpha"),
    ("mfarm_inf", lambda: M.mfarm(frame().assign(BASE=np.inf)), "P"),
    ("mfarm_list", lambda: M.mfarm([[0.1] * 13] * 3), "P"),
    (
        "accuracy_labels_other_index",
        lambda: M.mfarm_accuracy(
            frame(4).set_axis(list("abcd")), pd.Series([0, 1, 0, 1], index=list("abcz"))
        ),
        "y_true",
    ),
    (
        "accuracy_labels_dup_index",
        lambda: M.mfarm_accuracy(
            frame(4).set_axis(list("abcd")), pd.Series([0, 1, 0, 1], index=list("aacd"))
        ),
        "y_true",
    ),
    (
        "accuracy_labels_two_cols",
        lambda: M.mfarm_accuracy(frame(4), pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 0, 1]})),
        "y_true",
    ),
    ("accuracy_labels_nonbinary", lambda: M.mfarm_accuracy(frame(4), [0, 1, 2, 1]), "y_true"),
    ("parity_labels_short", lambda: M.parity_scores(frame(4), [0, 1]), "y_true"),
    ("mfarm_table_not_frame", lambda: M.mfarm_table([1, 2]), "scores"),
    ("mfarm_table_threshold", lambda: M.mfarm_table(long_scores(), threshold=1.5), "threshold"),
    ("mfarm_table_by_missing", lambda: M.mfarm_table(long_scores(), by=("task", "model")), "by"),
    ("variant_matrix_nan", lambda: M.variant_matrix(long_scores().assign(p_yes=np.nan)), "scores"),
    (
        "score_table_not_prompt_table",
        lambda: M.score_table(None, pd.DataFrame({"prompt": ["x"]})),
        "table",
    ),
    (
        "plot_empty",
        lambda: M.plot_accuracy_skew(
            pd.DataFrame(columns=["accuracy_skew", "task", "tier", "model"]), source="s"
        ),
        "tab",
    ),
    (
        "plot_missing_col",
        lambda: M.plot_context(pd.DataFrame({"tier": ["low"]}), source="s"),
        "tab",
    ),
    (
        "plot_no_source",
        lambda: M.plot_precision_fab(
            pd.DataFrame({"precision": ["fp32"], "model": ["m"], "task": ["t"], "fab": [0.5]}),
            source=" ",
        ),
        "source",
    ),
    (
        "spearman_exact_large_n",
        lambda: M.spearman_permutation_p(np.arange(11.0), np.arange(11.0)),
        "x",
    ),
    # --- fairlib.mfarm_reliability
    ("mds_power", lambda: R.min_detectable_shift(frame(), power=1.0), "power"),
    ("mds_group_base", lambda: R.min_detectable_shift(frame(), group="BASE"), "group"),
    ("mds_group_unknown", lambda: R.min_detectable_shift(frame(), group="Martian_Male"), "group"),
    (
        "mds_shifts_decreasing",
        lambda: R.min_detectable_shift(frame(), shifts=(0.1, 0.05)),
        "shifts",
    ),
    ("mds_shifts_empty", lambda: R.min_detectable_shift(frame(), shifts=()), "shifts"),
    ("mds_n_resamples_zero", lambda: R.min_detectable_shift(frame(), n_resamples=0), "n_resamples"),
    ("vr_threshold", lambda: R.verdict_reliability(frame(), threshold=2), "threshold"),
    ("vr_sizes", lambda: R.verdict_reliability(frame(), resample_sizes=(1,)), "resample_sizes"),
    ("vr_not_frame", lambda: R.verdict_reliability(np.ones((5, 13))), "P"),
    (
        "null_rates_resamples",
        lambda: R.null_submetric_rates(frame(), n_resamples=-1),
        "n_resamples",
    ),
    ("replicates_empty", lambda: R.replicate_scores(None, []), "prompts"),
    ("replicates_one", lambda: R.replicate_scores(None, ["a"], n_replicates=1), "n_replicates"),
    # --- fairlib.finetune
    ("lora_r", lambda: F.LoraSettings(r=0), "r"),
    ("lora_dropout", lambda: F.LoraSettings(dropout=1.0), "dropout"),
    ("lora_targets", lambda: F.LoraSettings(target_modules=()), "target_modules"),
    ("lora_lr_str", lambda: F.LoraSettings(learning_rate="fast"), "learning_rate"),
    (
        "training_on_test",
        lambda: F.training_examples("ed_triage", source="synthetic", split="test"),
        "split",
    ),
    (
        "training_variants",
        lambda: F.training_examples("ed_triage", source="synthetic", variants_per_case=14),
        "variants_per_case",
    ),
    (
        "finetune_labels",
        lambda: F.finetune_lora(_Model(), _Tok(), ["a", "b"], [0, 2], save_dir="x"),
        "labels",
    ),
    (
        "finetune_lengths",
        lambda: F.finetune_lora(_Model(), _Tok(), ["a", "b"], [0], save_dir="x"),
        "labels",
    ),
    (
        "finetune_prompts",
        lambda: F.finetune_lora(_Model(), _Tok(), [], [], save_dir="x"),
        "prompts",
    ),
    (
        "finetune_settings",
        lambda: F.finetune_lora(_Model(), _Tok(), ["a"], [1], save_dir="x", settings={"r": 4}),
        "settings",
    ),
]


@pytest.mark.parametrize("call,argument", [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(FairlibInputError) as e:
        call()
    assert e.value.argument == argument, (e.value.argument, str(e.value))
    assert f"`{argument}`" in str(e.value) or argument in str(e.value)


# ---------------------------------------------------------------- undefined results carry a reason
def test_undetectable_shift_is_nan_with_reason():
    r = R.min_detectable_shift(frame(4), n_resamples=3, seed=0)
    assert math.isnan(r.shift) and "no shift" in r.reason


def test_accuracy_skew_without_a_class_is_nan_with_reason():
    s = M.accuracy_skew([1, 1, 1], [1, 0, 1])
    assert math.isnan(s.skew) and "no negative cases" in s.reason


def test_constant_base_correlation_reason():
    Pm = frame(30).assign(BASE=0.5)
    s = M.mfarm(Pm).submetrics["correlation_difference"]
    assert s.score == 1.0 and all("constant BASE" in r for r in s.reasons)


def test_parity_without_positives_reason():
    ps = M.parity_scores(frame(6), [0] * 6)
    assert math.isnan(ps.eo_score) and "no positive cases" in ps.reason
