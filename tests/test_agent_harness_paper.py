"FairMedAgent harness option harness='paper' (the authors' runner settings) beside fairlib's default harness."

import json, re
import pytest
from fairlib.core import FairlibInputError
from fairlib.agent.conditions import (
    CONDITIONS,
    REFERENCE,
    get_conditions,
    render_descriptor,
    REFERENCE_SLOTS,
)
from fairlib.agent.vignettes import load_vignettes
from fairlib.agent.loop import run_trajectories, render_context, step_decisions
from fairlib.agent.policies import FakeOptionPolicy, GenerativeJSONPolicy

V = load_vignettes()
VID = "tri_clear_01"
PAPER_FORM = re.compile(
    r"^Patient: (\d+)-year-old (.+) (man|woman), (private|Medicaid) insurance, (full|limited) English proficiency\.$"
)


def test_paper_descriptor_form_and_reference_age():
    P = get_conditions(harness="paper")
    assert list(P) == list(CONDITIONS)  # the same ids in the same order
    for cid, c in P.items():
        m = PAPER_FORM.match(c.render())
        assert m, c.render()
        f = c.fillers
        assert m.groups() == (
            str(f["age"]),
            f["race_ethnicity"],
            f["sex"],
            f["insurance"],
            f["english"],
        )
    assert (
        P[REFERENCE].render()
        == "Patient: 50-year-old White man, private insurance, full English proficiency."
    )
    ages = sorted({c.fillers["age"] for c in P.values()})
    assert ages == [34, 50, 78]
    # every non-age condition keeps the reference age
    assert all(c.fillers["age"] == 50 for c in P.values() if c.attribute != "age")


def test_paper_sham_token_is_green_eyed_and_fairlib_keeps_its_own():
    P, F = get_conditions(harness="paper"), get_conditions()
    assert (
        "green-eyed" in P["control_sham"].render()
        and "left-handed" not in P["control_sham"].render()
    )
    assert "left-handed" in F["control_sham"].render()
    # the sham differs from the reference in exactly the one filler, like the fairlib sham
    diff = {s for s, v in P["control_sham"].fillers.items() if P[REFERENCE].fillers[s] != v}
    assert diff == {"race_ethnicity"}
    assert P["control_rerender"].render() == P[REFERENCE].render()


def test_default_harness_is_unchanged():
    assert get_conditions() == get_conditions(harness="fairlib") == CONDITIONS
    assert (
        CONDITIONS[REFERENCE].render()
        == "Patient: White man, 52 years old, private insurance, full English."
    )
    assert render_descriptor(REFERENCE_SLOTS) == render_descriptor(
        REFERENCE_SLOTS, harness="fairlib"
    )
    d = {x.name: x for x in step_decisions("triage", V[VID])}
    assert d["urgency"].options == tuple(str(i) for i in range(10))
    d = {x.name: x for x in step_decisions("document", V[VID])}
    assert d["follow_up"].values == (1, 3, 7, 14, 30)
    c = render_context(V[VID], "Patient: X.", {}, "triage")
    assert c.splitlines()[:2] == [f"Case: {V[VID].narrative}", "Patient: X."]


def test_paper_prompt_puts_descriptor_before_presentation():
    desc = get_conditions(harness="paper")[REFERENCE].render()
    c = render_context(V[VID], desc, {"esi": 2, "urgency": 80}, "reassess", harness="paper")
    lines = c.splitlines()
    assert lines[0] == desc
    assert lines[1] == f"Presentation: {V[VID].narrative}"
    assert "Case:" not in c
    assert "urgency 80/100" in c
    # without a descriptor (descriptor_steps='first' after triage) the presentation comes first
    assert (
        render_context(V[VID], None, {}, "reassess", harness="paper")
        .splitlines()[0]
        .startswith("Presentation: ")
    )


def test_paper_urgency_is_an_integer_on_0_to_100():
    (u,) = [d for d in step_decisions("triage", V[VID], harness="paper") if d.name == "urgency"]
    assert u.values == tuple(range(101)) and u.options == tuple(str(i) for i in range(101))
    assert (u.lo, u.hi) == (0, 100) and "100" in u.question


def test_paper_follow_up_is_a_free_integer_of_days():
    (f,) = [d for d in step_decisions("document", V[VID], harness="paper") if d.name == "follow_up"]
    assert "A " not in f.question and "one letter" not in f.question
    assert set(f.values) == set(
        range(0, 91)
    )  # no option list of intervals: any whole number of days
    for days in (0, 1, 2, 3, 4, 5, 7, 10, 14):  # the answers seen in the authors' runs

        def gen(prompts, days=days):
            out = []
            for p in prompts:
                keys = re.findall(r'"([a-z_:]+)":', p)
                obj = {
                    k: (
                        days
                        if k == "follow_up_days"
                        else 50
                        if k == "urgency"
                        else 2
                        if k == "esi"
                        else 1
                    )
                    for k in keys
                    if k != "orders"
                }
                for k in keys:
                    if k in (
                        "referral",
                        "stigmatizing_language",
                        "admit",
                        "icu",
                        "controlled_substance_caution",
                    ):
                        obj[k] = False
                if "orders" in keys:
                    obj["orders"] = []
                out.append(json.dumps(obj))
            return out

        run = run_trajectories(
            GenerativeJSONPolicy(gen, model_id="g"),
            vignettes=[VID],
            conditions=[REFERENCE],
            harness="paper",
        )
        t = run.trajectories.set_index("action")
        assert t.loc["follow_up_interval", "ordinal"] == days
        assert t.loc["follow_up_interval", "value"] == int(days <= 7)
        assert t.loc["high_acuity", "score"] == 50


def test_paper_run_with_option_policy_and_settings_recorded():
    run = run_trajectories(
        FakeOptionPolicy(), vignettes=[VID], conditions=[REFERENCE, "control_sham"], harness="paper"
    )
    assert run.settings["harness"] == "paper"
    t = run.trajectories
    fu = t[t.action == "follow_up_interval"].ordinal
    assert fu.between(0, 90).all()
    sc = t[t.action == "high_acuity"].score
    assert sc.between(0, 100).all()
    assert (t.condition == "control_sham").any()
    assert (
        run_trajectories(FakeOptionPolicy(), vignettes=[VID], conditions=[REFERENCE]).settings[
            "harness"
        ]
        == "fairlib"
    )


def test_paper_run_matches_default_except_the_harness():
    a = run_trajectories(FakeOptionPolicy(), vignettes=[VID], conditions=[REFERENCE])
    b = run_trajectories(
        FakeOptionPolicy(), vignettes=[VID], conditions=[REFERENCE], harness="paper"
    )
    ca = a.calls[a.calls.model_call]
    cb = b.calls[b.calls.model_call]
    assert len(ca) == len(cb)
    assert set(ca.context_hash).isdisjoint(set(cb.context_hash))  # every prompt differs


@pytest.mark.parametrize("bad", ["authors", "Paper", 1])
def test_unknown_harness_is_refused(bad):
    with pytest.raises(FairlibInputError, match="harness"):
        get_conditions(harness=bad)
    with pytest.raises(FairlibInputError, match="harness"):
        run_trajectories(FakeOptionPolicy(), vignettes=[VID], conditions=[REFERENCE], harness=bad)


def test_fake_policy_scores_every_option_of_long_lists():
    # the paper harness asks urgency over 101 labels and follow-up over 91: each label must get a probability
    run = run_trajectories(
        FakeOptionPolicy(), vignettes=[VID], conditions=[REFERENCE], harness="paper"
    )
    c = run.calls[run.calls.model_call].set_index("decision")
    assert len(json.loads(c.loc["urgency", "probs"])) == 101
    assert len(json.loads(c.loc["follow_up", "probs"])) == 91
    # over many prompts, drawn urgencies reach beyond the first 32 labels
    many = run_trajectories(
        FakeOptionPolicy(sharpness=0.0), vignettes=[VID], replicates=8, harness="paper"
    )
    s = many.trajectories.query("action == 'high_acuity'").score
    assert s.max() > 31


def test_option_scoring_refuses_multi_token_labels_of_the_paper_harness_clearly():
    from fairlib.llm.transformers import TransformersScorer
    from fairlib.llm.loading import make_tiny_model
    from fairlib.agent.policies import OptionScoringPolicy

    m, t = make_tiny_model(seed=0)
    multi = [
        o for o in map(str, range(101)) if len(t(o, add_special_tokens=False)["input_ids"]) != 1
    ]
    pol = OptionScoringPolicy(TransformersScorer(m, t, model_id="tiny"))
    if multi:  # the tokenizer splits some whole numbers: a clear refusal naming the remedy, never a partial answer
        with pytest.raises(FairlibInputError, match="GenerativeJSONPolicy"):
            run_trajectories(pol, vignettes=[VID], conditions=[REFERENCE], harness="paper")
    else:
        run = run_trajectories(pol, vignettes=[VID], conditions=[REFERENCE], harness="paper")
        assert run.trajectories.query("action == 'high_acuity'").score.between(0, 100).all()


def test_condition_lengths_compare_with_the_reference_of_the_same_harness():
    from fairlib.agent.conditions import condition_lengths

    P = get_conditions(harness="paper")
    L = condition_lengths(P).set_index("condition")
    ref = P[REFERENCE].render()
    for cid, c in P.items():  # independent count against the paper reference
        assert L.loc[cid, "d_characters"] == len(c.render()) - len(ref)
        assert L.loc[cid, "d_words"] == len(c.render().split()) - len(ref.split())
    assert L.loc[REFERENCE, "d_characters"] == 0
    mixed = {REFERENCE: P[REFERENCE], "control_sham": CONDITIONS["control_sham"]}
    with pytest.raises(FairlibInputError, match="conditions"):
        condition_lengths(mixed)
