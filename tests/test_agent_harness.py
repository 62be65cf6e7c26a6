"FairMedAgent harness: vignettes, conditions, policies and the loop, against independent oracles."

import json, re
import numpy as np
import pytest
from scipy import stats as sps
from fairlib.agent.vignettes import load_vignettes, vignette_bands, VIGNETTE_DOMAINS, AMBIGUITY
from fairlib.agent.conditions import (
    CONDITIONS,
    REFERENCE,
    CONTROLS,
    INTERSECTIONAL,
    SLOTS,
    condition_lengths,
)
from fairlib.agent.policies import (
    draw_option,
    FakeOptionPolicy,
    OptionScoringPolicy,
    Call,
    Decision,
    GenerativeJSONPolicy,
    transformers_generator,
)
from fairlib.agent.loop import run_trajectories, STEPS
from fairlib.agent.trajectory import ACTIONS, validate_trajectories, parse_items
from fairlib.agent.floor import instability_floor

V = load_vignettes()


def test_vignette_set_covers_domains_and_labels():
    assert len(V) >= 16
    assert {v.domain for v in V.values()} == set(VIGNETTE_DOMAINS)
    assert {v.ambiguity for v in V.values()} == set(AMBIGUITY)
    assert len({v.canary for v in V.values()}) == len(V)
    for v in V.values():
        assert v.guideline_order in v.fixture and len(v.fixture) >= 3
        assert v.canary not in v.narrative  # the canary marks the file, it is not prompted


def test_bands_are_author_derived_with_rule_clause_reasoning_and_inside_the_domain():
    B = vignette_bands(V)
    assert {(b.vignette, b.action) for b in B} == {
        (v, a) for v in V for a in ("high_acuity", "any_opioid", "follow_up_interval")
    }
    for b in B:
        assert (
            b.provenance == "author-derived"
            and not b.adjudicated
            and b.source
            and b.clause
            and b.reasoning
        )
        assert b.acceptable <= set(ACTIONS[b.action].domain)
    # some drafts straddle their threshold, so WCFR has a denominator at all
    assert sum(b.straddles() for b in B) >= 4


def test_descriptor_has_every_slot_and_conditions_vary_only_fillers():
    ref = CONDITIONS[REFERENCE].render()
    pat = re.compile(
        r"^Patient: (.+) (man|woman), (\d+) years old, (private|Medicaid) insurance, (full|limited) English\.$"
    )
    for c in CONDITIONS.values():
        m = pat.match(c.render())
        assert m, c.render()
        assert [str(x) for x in m.groups()] == [str(c.fillers[s]) for s in SLOTS]
    assert len([c for c in CONDITIONS.values() if c.kind != "control"]) == 12
    assert set(INTERSECTIONAL) <= set(CONDITIONS) and len(CONTROLS) == 3
    assert CONDITIONS["control_rerender"].render() == ref
    L = condition_lengths().set_index("condition")
    for cid, c in CONDITIONS.items():  # independent count
        assert L.loc[cid, "words"] == len(c.render().split()) and L.loc[cid, "characters"] == len(
            c.render()
        )


@pytest.mark.parametrize("temperature", [1.0, 0.5, 2.0])
def test_draw_option_frequencies_match_tempered_distribution(temperature):
    p = np.array([0.6, 0.3, 0.1])
    rng = np.random.default_rng(0)
    draws = np.array([draw_option(p, temperature=temperature, seed=rng) for _ in range(4000)])
    q = p ** (1 / temperature)
    q /= q.sum()
    obs = np.bincount(draws, minlength=3)
    assert sps.chisquare(obs, q * len(draws)).pvalue > 1e-3


@pytest.fixture(scope="module")
def tiny():
    from fairlib.llm.transformers import TransformersScorer
    from fairlib.llm.loading import make_tiny_model

    m, t = make_tiny_model(seed=0)
    return m, t, TransformersScorer(m, t, model_id="tiny")


def _single_token_options(tok):
    for cand in (("Yes", "No"), ("yes", "no"), ("A", "B")):
        if all(len(tok(o, add_special_tokens=False)["input_ids"]) == 1 for o in cand):
            return cand
    pytest.skip("tiny tokenizer has no single-token option pair")


def test_option_probabilities_equal_a_plain_forward_pass(tiny):
    import torch

    m, t, sc = tiny
    opts = _single_token_options(t)
    d = (
        Decision("a", "First question?", opts, (1, 0)),
        Decision("b", "Second one here?", opts, (1, 0)),
    )
    calls = [
        Call(
            ("v", c, 0, "s"),
            "v",
            f"A 54 year old patient with chest pain and fever. Patient: {c} man.",
            d,
        )
        for c in ("White", "Black", "Asian")
    ]
    pol = OptionScoringPolicy(sc)
    got = pol.score(calls)
    ids = [t(o, add_special_tokens=False)["input_ids"][0] for o in opts]
    for call, res in zip(calls, got):
        for dec, (p, mass, _) in zip(call.decisions, res):
            text = sc.format(f"{call.context}\n{dec.question}", system=pol.system)
            enc = torch.as_tensor([sc.encode([text])[0]])
            with torch.inference_mode():
                sm = torch.softmax(m(input_ids=enc).logits[0, -1].double(), -1)
            q = sm[ids].numpy()
            np.testing.assert_allclose(p, q / q.sum(), atol=1e-5)
            assert mass == pytest.approx(float(q.sum()), abs=1e-5)
    assert pol.n_tokens < sum(
        len(sc.encode([sc.format(f"{c.context}\n{x.question}", system=pol.system)])[0])
        for c in calls
        for x in c.decisions
    )  # the shared prefixes were not recomputed


def test_greedy_policy_has_zero_floor_by_construction():
    run = run_trajectories(
        FakeOptionPolicy(greedy=True),
        vignettes=list(V)[:4],
        conditions=[REFERENCE],
        replicates=4,
        seed=0,
    )
    f = instability_floor(
        run.trajectories[run.trajectories.action.isin(["high_acuity", "admit", "referral"])]
    )
    assert f.flips == 0 and f.floor == 0


def test_loop_order_environment_fixture_and_complete_table():
    run = run_trajectories(
        FakeOptionPolicy(),
        vignettes=list(V)[:3],
        conditions=[REFERENCE, "white_man_private_lep"],
        replicates=2,
        seed=5,
    )
    t = validate_trajectories(run.trajectories)  # complete: every action in every trajectory
    assert set(t.action) == set(ACTIONS)
    env = run.calls[run.calls.step == "environment"].set_index(
        ["vignette", "condition", "replicate"]
    )
    for _, r in t[t.action == "guideline_orders"].iterrows():
        items = parse_items(r["items"])
        res = json.loads(env.loc[(r.vignette, r.condition, r.replicate), "raw_text"])
        assert set(res) == items and all(res[i] == V[r.vignette].fixture[i] for i in items)
        assert r.value == int(V[r.vignette].guideline_order in items)
    order = (
        run.calls.drop_duplicates(["vignette", "condition", "replicate", "step"])
        .groupby(["vignette", "condition", "replicate"])
        .step.agg(list)
    )
    assert all(list(s) == list(STEPS) for s in order)
    assert not run.calls[run.calls.step == "environment"].model_call.any()


def test_single_prime_reuses_identical_downstream_prompts():
    pol = FakeOptionPolicy(greedy=True)
    conds = [REFERENCE, "black_woman_medicaid", "control_sham"]
    run = run_trajectories(
        pol, vignettes=list(V)[:2], conditions=conds, descriptor_steps="first", seed=0
    )
    c = run.calls[run.calls.model_call]
    assert (
        c[c.step == "triage"].descriptor_rendered.all()
        and not c[c.step != "triage"].descriptor_rendered.any()
    )
    # with triage forced the state is identical across conditions, and without the descriptor so is every
    # later prompt: the ordering round is scored once per vignette and answered from the cache for the rest
    pol2 = FakeOptionPolicy(greedy=True)
    run2 = run_trajectories(
        pol2,
        vignettes=list(V)[:2],
        conditions=conds,
        descriptor_steps="first",
        forced={"triage": {"esi": 2, "urgency": 50}},
        seed=0,
    )
    o = run2.calls[run2.calls.step == "ordering"]
    assert o.groupby("vignette").context_hash.nunique().eq(1).all()
    assert o.from_cache.sum() == len(o) * (len(conds) - 1) / len(conds)


def test_forced_arm_records_forced_rows_and_no_call():
    run = run_trajectories(
        FakeOptionPolicy(),
        vignettes=list(V)[:2],
        conditions=[REFERENCE],
        forced={"ordering": {"items": []}},
        seed=0,
    )
    t = run.trajectories
    assert t[t.step == "ordering"].forced.all() and not t[t.step != "ordering"].forced.any()
    assert (t[t.action == "guideline_orders"].value == 0).all()
    assert not run.calls[(run.calls.step == "ordering")].model_call.any()


def test_scaffolds_change_only_the_instruction_sentence():
    a = run_trajectories(
        FakeOptionPolicy(), vignettes=list(V)[:1], conditions=[REFERENCE], scaffold="C0", seed=0
    )
    b = run_trajectories(
        FakeOptionPolicy(), vignettes=list(V)[:1], conditions=[REFERENCE], scaffold="C2", seed=0
    )
    assert set(a.calls.scaffold.dropna()) == {"C0"} and set(b.calls.scaffold.dropna()) == {"C2"}


def test_generative_policy_on_a_tiny_model_records_instead_of_crashing(tiny):
    m, t, _ = tiny
    pol = GenerativeJSONPolicy(transformers_generator(m, t, max_new_tokens=6), model_id="tiny")
    run = run_trajectories(pol, vignettes=list(V)[:1], conditions=[REFERENCE])
    c = run.calls[run.calls.model_call]
    assert (
        set(c.status) <= {"ok", "invalid", "declined"}
        and c.raw_text.map(lambda s: isinstance(s, str)).all()
    )
    assert (c.retry_policy.str.contains("one retry")).all()
