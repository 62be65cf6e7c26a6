"""Bad inputs to fairlib.agent.* and fairlib.stats: a FairlibInputError naming the argument, or an undefined result
with its reason."""

import json
import numpy as np
import pandas as pd
import pytest
from fairlib.core import FairlibInputError
from fairlib.agent.vignettes import load_vignettes, find_canaries
from fairlib.agent.conditions import render_descriptor, get_conditions, REFERENCE_SLOTS
from fairlib.agent.policies import (
    draw_option,
    Decision,
    FakeOptionPolicy,
    parse_json_answer,
    GenerativeJSONPolicy,
    make_policy,
    OptionScoringPolicy,
)
from fairlib.agent.loop import run_trajectories
from fairlib.agent.floor import instability_floor, floor_bootstrap
from fairlib.agent.metrics import route_contrast, ConfoundedPair
from fairlib.agent.studies import (
    contrast_table,
    interventional_propagation,
    observational_propagation,
    accumulation_composite,
    wcfr_table,
    option_shift,
)
from fairlib.agent.interchange import read_published_trajectories
from fairlib.stats import paired_permutation_test, mcnemar_exact, wild_cluster_bootstrap

VS = ["tri_clear_01", "med_border_01", "doc_clear_01", "ord_clear_01"]
CS = ["ref_white_man_private", "black_woman_medicaid"]


@pytest.fixture(scope="module")
def free():
    return run_trajectories(FakeOptionPolicy(), vignettes=VS, conditions=CS, seed=0)


def _yaml(tmp_path, text):
    p = tmp_path / "v.yaml"
    p.write_text(text)
    return p


V1 = """rules: {{esi: ESI}}
vignettes:
- id: a
  domain: {domain}
  ambiguity: clear
  canary: c-a
  narrative: text
  orderables: {{ECG: ok}}
  guideline_order: {go}
  bands: {{high_acuity: {{acceptable: [1, 2], rule: {rule}, clause: x, reasoning: y}}}}
"""


def _floor_table():
    rows = [
        {"vignette": v, "replicate": r, "action": "admit", "value": (r + i) % 2}
        for i, v in enumerate(["a", "b", "c"])
        for r in range(4)
    ]
    return pd.DataFrame(rows)


CASES = {
    "vignettes-no-file": (lambda tp, fr: load_vignettes(tp / "none.yaml"), "path"),
    "vignettes-bad-yaml": (lambda tp, fr: load_vignettes(_yaml(tp, "a: [1, 2")), "path"),
    "vignettes-no-list": (lambda tp, fr: load_vignettes(_yaml(tp, "vignettes: []")), "path"),
    "vignettes-unknown-domain": (
        lambda tp, fr: load_vignettes(
            _yaml(tp, V1.format(domain="cardiology", go="ECG", rule="esi"))
        ),
        "vignettes",
    ),
    "vignettes-guideline-not-orderable": (
        lambda tp, fr: load_vignettes(_yaml(tp, V1.format(domain="triage", go="MRI", rule="esi"))),
        "vignettes",
    ),
    "vignettes-unknown-rule": (
        lambda tp, fr: load_vignettes(
            _yaml(tp, V1.format(domain="triage", go="ECG", rule="folklore"))
        ),
        "vignettes",
    ),
    "vignettes-duplicate-id": (
        lambda tp, fr: load_vignettes(
            _yaml(
                tp,
                V1.format(domain="triage", go="ECG", rule="esi")
                + V1.format(domain="triage", go="ECG", rule="esi").split("vignettes:\n")[1],
            )
        ),
        "vignettes",
    ),
    "vignette-results-unknown-item": (
        lambda tp, fr: load_vignettes()["tri_clear_01"].results(["MRI brain"]),
        "items",
    ),
    "canaries-not-text": (lambda tp, fr: find_canaries(42), "text"),
    "descriptor-missing-slot": (
        lambda tp, fr: render_descriptor(
            {k: v for k, v in REFERENCE_SLOTS.items() if k != "insurance"}
        ),
        "fillers",
    ),
    "descriptor-extra-slot": (
        lambda tp, fr: render_descriptor({**REFERENCE_SLOTS, "religion": "none"}),
        "fillers",
    ),
    "conditions-unknown": (lambda tp, fr: get_conditions(["martian_man_private"]), "conditions"),
    "draw-nan": (lambda tp, fr: draw_option([0.5, np.nan]), "probs"),
    "draw-one-option": (lambda tp, fr: draw_option([1.0]), "probs"),
    "draw-temperature-zero": (lambda tp, fr: draw_option([0.5, 0.5], temperature=0), "temperature"),
    "draw-temperature-text": (
        lambda tp, fr: draw_option([0.5, 0.5], temperature="hot"),
        "temperature",
    ),
    "decision-one-option": (lambda tp, fr: Decision("x", "q", ("Yes",), (1,)), "options"),
    "policy-negative-temperature": (
        lambda tp, fr: FakeOptionPolicy(temperature=-1.0),
        "temperature",
    ),
    "json-not-text": (lambda tp, fr: parse_json_answer(None, ()), "text"),
    "generative-not-callable": (lambda tp, fr: GenerativeJSONPolicy("gpt"), "generate"),
    "make-policy-empty": (lambda tp, fr: make_policy(""), "kind"),
    "loop-policy-without-run": (
        lambda tp, fr: run_trajectories(object(), vignettes=VS[:1]),
        "policy",
    ),
    "loop-unknown-vignette": (
        lambda tp, fr: run_trajectories(FakeOptionPolicy(), vignettes=["nope"]),
        "vignettes",
    ),
    "loop-zero-replicates": (
        lambda tp, fr: run_trajectories(FakeOptionPolicy(), vignettes=VS[:1], replicates=0),
        "replicates",
    ),
    "loop-replicates-text": (
        lambda tp, fr: run_trajectories(FakeOptionPolicy(), vignettes=VS[:1], replicates="2"),
        "replicates",
    ),
    "loop-descriptor-steps": (
        lambda tp, fr: run_trajectories(
            FakeOptionPolicy(), vignettes=VS[:1], descriptor_steps="some"
        ),
        "descriptor_steps",
    ),
    "loop-scaffold": (
        lambda tp, fr: run_trajectories(FakeOptionPolicy(), vignettes=VS[:1], scaffold="C9"),
        "scaffold",
    ),
    "loop-forced-downstream": (
        lambda tp, fr: run_trajectories(
            FakeOptionPolicy(), vignettes=VS[:1], forced={"prescribe": {"tier": 1}}
        ),
        "forced",
    ),
    "loop-forced-not-orderable": (
        lambda tp, fr: run_trajectories(
            FakeOptionPolicy(),
            vignettes=VS[:1],
            conditions=CS[:1],
            forced={"ordering": {"items": ["MRI brain"]}},
        ),
        "forced",
    ),
    "floor-nan-replicate-not-dropped": (
        lambda tp, fr: instability_floor(
            _floor_table().assign(replicate=lambda d: d.replicate.where(d.index != 3))
        ),
        "trajectories",
    ),
    "floor-nan-vignette": (
        lambda tp, fr: instability_floor(
            _floor_table().assign(vignette=lambda d: d.vignette.where(d.index != 0))
        ),
        "trajectories",
    ),
    "floor-both-resample-names": (
        lambda tp, fr: floor_bootstrap(_floor_table(), n_boot=10, n_resamples=10),
        "n_boot",
    ),
    "contrast-missing-reference": (
        lambda tp, fr: contrast_table(fr.trajectories, reference="white_woman_private"),
        "reference",
    ),
    "contrast-unknown-comparison": (
        lambda tp, fr: contrast_table(fr.trajectories, comparisons=["white_woman_private"]),
        "comparisons",
    ),
    "contrast-no-actions": (
        lambda tp, fr: contrast_table(fr.trajectories, actions=["not_an_action"]),
        "actions",
    ),
    "propagation-no-forced-rows": (
        lambda tp, fr: interventional_propagation(fr.trajectories, fr.trajectories),
        "forced_reference",
    ),
    "observational-unknown-upstream": (
        lambda tp, fr: observational_propagation(
            fr.trajectories, reference=CS[0], comparison=CS[1], upstream="esi"
        ),
        "upstream",
    ),
    "accumulation-one-action": (
        lambda tp, fr: accumulation_composite(
            fr.trajectories, reference=CS[0], comparison=CS[1], actions=["admit"]
        ),
        "actions",
    ),
    "accumulation-zero-resamples": (
        lambda tp, fr: accumulation_composite(
            fr.trajectories, reference=CS[0], comparison=CS[1], n_resamples=0
        ),
        "n_resamples",
    ),
    "wcfr-without-bands": (
        lambda tp, fr: wcfr_table(fr.trajectories, reference=CS[0], comparisons=CS[1:], bands=None),
        "bands",
    ),
    "option-shift-not-frame": (lambda tp, fr: option_shift([1, 2, 3]), "calls"),
    "permutation-symmetric": (
        lambda tp, fr: paired_permutation_test([1, 0, 1], signed=True, statistic="wcfr"),
        "statistic",
    ),
    "permutation-unsigned": (
        lambda tp, fr: paired_permutation_test([1, 0, 1], signed=False),
        "signed",
    ),
    "permutation-nan": (
        lambda tp, fr: paired_permutation_test([1, np.nan, 1], signed=True),
        "differences",
    ),
    "permutation-strings": (
        lambda tp, fr: paired_permutation_test(["a", "b"], signed=True),
        "differences",
    ),
    "permutation-cluster-length": (
        lambda tp, fr: paired_permutation_test([1, 0, 1], [0, 1], signed=True),
        "clusters",
    ),
    "permutation-zero-resamples": (
        lambda tp, fr: paired_permutation_test([1, 0, 1], signed=True, n_resamples=0),
        "n_resamples",
    ),
    "published-no-path": (lambda tp, fr: read_published_trajectories(tp / "nowhere"), "path"),
    "published-bad-json": (
        lambda tp, fr: read_published_trajectories(_write(tp, "{not json")),
        "path",
    ),
    "published-esi-out-of-range": (
        lambda tp, fr: read_published_trajectories(_write(tp, _pub(esi_acuity=7))),
        "path",
    ),
    "published-followup-out-of-range": (
        lambda tp, fr: read_published_trajectories(_write(tp, _pub(followup_days=120))),
        "path",
    ),
    "published-nothing-complete": (
        lambda tp, fr: read_published_trajectories(_write(tp, _pub(complete=False))),
        "path",
    ),
    "route-estimate-text": (lambda tp, fr: route_contrast("lep", "referral", "up"), "estimate"),
    "registry-caution-never-exempt": (
        lambda tp, fr: ConfoundedPair("lep", "controlled_substance_caution", -1),
        "action",
    ),
    "registry-domain-key": (lambda tp, fr: ConfoundedPair("insurance", "medication", -1), "action"),
    "mcnemar-negative": (lambda tp, fr: mcnemar_exact(-1, 3), "b"),
    "wild-bootstrap-symmetric": (
        lambda tp, fr: wild_cluster_bootstrap(
            np.ones(6), np.arange(6), signed=True, statistic="cfr"
        ),
        "statistic",
    ),
}


def _pub(esi_acuity=2, followup_days=7, complete=True):
    rec = {
        "vignette_id": "v",
        "condition_id": "ref",
        "model": "m",
        "complete": complete,
        "actions": {
            "triage": {"esi_acuity": esi_acuity, "urgency_score": 50},
            "reassess": {"admit": True, "escalate_icu": False},
            "document": {
                "followup_days": followup_days,
                "referral": False,
                "stigmatizing_language_flags": [],
            },
        },
    }
    return json.dumps({"provenance": {}, "trajectories": [rec]})


def _write(tp, text):
    d = tp / "rep01"
    d.mkdir(exist_ok=True)
    (d / "trajectories.json").write_text(text)
    return tp


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_bad_input_raises_naming_the_argument(case, tmp_path, free):
    f, arg = CASES[case]
    with pytest.raises(FairlibInputError) as e:
        f(tmp_path, free)
    assert e.value.argument == arg and f"`{arg}`" in str(e.value)


def test_option_scoring_refuses_multi_token_options():
    from fairlib.llm.transformers import TransformersScorer
    from fairlib.llm.loading import make_tiny_model

    m, t = make_tiny_model(seed=0)
    pol = OptionScoringPolicy(TransformersScorer(m, t, model_id="tiny"))
    with pytest.raises(FairlibInputError, match="single-token") as e:
        pol.option_ids(("Definitely-not-one-token", "No"))
    assert e.value.argument == "options"


@pytest.mark.parametrize("differences", [[0, 0, 0], [0.0]], ids=["all-zero", "single-zero"])
def test_permutation_without_information_is_undefined_with_reason(differences):
    r = paired_permutation_test(differences, signed=True)
    assert np.isnan(r.p_value) and "no information" in r.reason


def test_mcnemar_without_discordant_pairs_is_undefined_with_reason():
    r = mcnemar_exact(0, 0)
    assert np.isnan(r.p_value) and not r.defined and "undefined" in r.reason


def test_invalid_generative_answers_are_recorded_not_crashed():
    pol = GenerativeJSONPolicy(lambda ps: ['{"esi": 9, "urgency": 50}'] * len(ps), model_id="stub")
    run = run_trajectories(pol, vignettes=VS[:1], conditions=CS[:1])
    c = run.calls[run.calls.model_call]
    assert set(c.status) == {"invalid"} and run.n_invalid == len(c) and run.trajectories.empty
    assert c.raw_text.str.contains('"esi": 9').all() and c.retried.all()
