"""Property tests (hypothesis) of the invariants the boundary campaign relies on (issue 34):

- any valid result survives a JSON round trip bit for bit (every field, floats by their bytes, and the text again);
- any single-field edit of a saved result is refused (by a check of its values, or by its content hash);
- no output path that `check_output_paths` lets through is the same file as an input (real paths and inodes, looked
  up here with the standard library);
- audit results do not depend on the order of the rows or on the index labels of pandas inputs.
"""

import copy
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fairlib as fl
from boundary_cases_results import same_value
from fairlib.core import FairlibInputError
from fairlib.datafiles import check_output_paths

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def records(draw, max_groups=4):
    "Labels, predictions (a group-dependent selection rate), scores, and 1-4 group codes of uneven sizes."
    n = draw(st.integers(40, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    k = draw(st.integers(1, max_groups))
    codes = draw(
        st.lists(
            st.sampled_from(["a", "b", "007", "7", "NA", "x y", "Zürich"]),
            min_size=k,
            max_size=k,
            unique=True,
        )
    )
    p = rng.dirichlet(np.ones(k))
    g = rng.choice(codes, n, p=p)
    y = rng.integers(0, 2, n)
    rate = {c: draw(st.floats(0.05, 0.95)) for c in codes}
    yp = (rng.random(n) < np.vectorize(rate.get)(g)).astype(int)
    prob = np.round(rng.random(n), 3)
    return y, yp, g, prob


@st.composite
def saved_results(draw):
    "A valid result of one of the kinds fairlib saves: audits (with/without VFR, scores, text labels), cells, rules."
    y, yp, g, prob = draw(records())
    kind = draw(
        st.sampled_from(["audit", "audit-vfr", "audit-prob", "audit-text", "cell", "four-fifths"])
    )
    ms = draw(st.sampled_from([0, 5, 30]))
    if kind == "audit":
        return fl.audit(y, yp, sensitive_features=g, min_support=ms)
    if kind == "audit-vfr":
        return fl.audit(
            y,
            yp,
            sensitive_features=g,
            min_support=ms,
            vfr=True,
            n_resamples=draw(st.integers(29, 40)),
        )
    if kind == "audit-prob":
        return fl.audit(y, yp, sensitive_features=g, min_support=ms, y_prob=prob)
    if kind == "audit-text":
        lab = lambda v: np.where(v == 1, "yes", "no")  # noqa: E731
        return fl.audit(lab(y), lab(yp), sensitive_features=g, min_support=ms, pos_label="yes")
    if kind == "cell":
        return fl.verdict_flip_rate(
            y, yp, sensitive_features=g, metric="SPD", n_resamples=30, min_support=ms
        )
    return fl.four_fifths_rule(y, yp, sensitive_features=g, min_support=ms)


def _fields(r):
    import dataclasses

    return [f.name for f in dataclasses.fields(r)]


@SETTINGS
@given(saved_results())
def test_any_valid_result_survives_a_json_round_trip_bit_for_bit(r):
    s = r.to_json()
    back = type(r).from_json(s)
    assert back.to_json() == s
    for f in _fields(r):
        assert same_value(getattr(r, f), getattr(back, f)), f


def _leaves(x, path=()):
    "Every (path, value) of a JSON document's leaves (numbers, strings, booleans, nulls)."
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _leaves(v, (*path, i))
    else:
        yield path, x


def _other(v, pick):
    "A different JSON value of a related kind (the edit a person might make)."
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + pick.draw(st.sampled_from([-2, -1, 1, 3, 100]))
    if isinstance(v, float):
        return pick.draw(
            st.sampled_from(
                [v + 1e-9, v * 1.5 + 0.01, -v - 0.1, 0.0 if v != 0 else 0.5, round(v, 2) + 0.001]
            )
        )
    if isinstance(v, str):
        return pick.draw(
            st.sampled_from([v + "x", v.upper() + "!", "", "Pass" if v != "Pass" else "Fail"])
        )
    return pick.draw(st.sampled_from([0, 0.5, "x", True]))


@SETTINGS
@given(saved_results(), st.data())
def test_any_single_field_edit_of_a_saved_result_is_caught(r, data):
    d = json.loads(r.to_json())
    leaves = list(_leaves(d))
    path, v = data.draw(st.sampled_from(leaves), label="edited leaf")
    new = _other(v, data)
    assume(json.dumps(new) != json.dumps(v))
    edited = copy.deepcopy(d)
    node = edited
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = new
    with pytest.raises(FairlibInputError):
        type(r).from_json(json.dumps(edited))


NAMES = st.sampled_from(
    ["in.csv", "r.json", "r.html", "sub/r.json", "sub/../in.csv", "./in.csv", "link", "hard", ""]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(NAMES, min_size=1, max_size=3), st.sampled_from(["in.csv", "link", "hard"]))
def test_no_output_path_is_ever_an_input(outs, data_name):
    d = Path(tempfile.mkdtemp())
    (d / "sub").mkdir()
    (d / "in.csv").write_text("y\n1\n")
    (d / "link").symlink_to(d / "in.csv")
    os.link(d / "in.csv", d / "hard")
    outputs = {f"o{i}": (str(d / n) if n else "") for i, n in enumerate(outs)}
    try:
        ok = check_output_paths(outputs, {"data": d / data_name})
    except FairlibInputError:
        return
    data_stat = os.stat(d / data_name)
    for p in ok.values():
        assert os.path.realpath(p) != os.path.realpath(d / data_name)
        if p.exists():
            assert (os.stat(p).st_ino, os.stat(p).st_dev) != (data_stat.st_ino, data_stat.st_dev)
    real = [os.path.realpath(p) for p in ok.values()]
    assert len(set(real)) == len(real)  # no two outputs are one file either


def _payload(r):
    return r.to_dict()


def _close(a, b, tol=1e-12) -> bool:
    "Equal JSON documents, floats to a relative `tol` (sums of scores in another order differ in the last bit)."
    if isinstance(a, dict):
        return (
            isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(_close(x, z, tol) for x, z in zip(a, b))
        )
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= tol * max(abs(a), abs(b))
    return a == b


@SETTINGS
@given(records(max_groups=3), st.data())
def test_audit_results_do_not_depend_on_row_order_or_index_labels(rec, data):
    y, yp, g, prob = rec
    n = len(y)
    perm = np.random.default_rng(data.draw(st.integers(0, 1000))).permutation(n)
    labels = data.draw(st.sampled_from(["ints", "shifted", "strings", "shuffled"]))
    index = {
        "ints": np.arange(n),
        "shifted": np.arange(n) * 3 + 17,
        "strings": np.array([f"row{i}" for i in range(n)]),
        "shuffled": np.random.default_rng(1).permutation(n),
    }[labels]
    vfr = data.draw(st.booleans())
    kw = dict(min_support=data.draw(st.sampled_from([0, 10, 30])))
    kw |= (
        dict(vfr=True, n_resamples=29) if vfr else dict(y_prob=prob)
    )  # see the note below on scores with vfr
    ref = fl.audit(y, yp, sensitive_features=g, **kw)
    s = lambda a: pd.Series(a, index=index).iloc[perm]  # noqa: E731  (rows in another order, other labels)
    kw2 = dict(kw, y_prob=s(prob)) if "y_prob" in kw else kw
    moved = fl.audit(s(y), s(yp), sensitive_features=s(g), **kw2)
    frame = pd.DataFrame({"y": y, "yp": yp, "g": g, "p": prob})
    kw3 = dict(kw, y_prob="p") if "y_prob" in kw else kw
    ref_data = fl.audit(
        "y", "yp", sensitive_features="g", data=frame, **kw3
    )  # its attribute is named "g"
    from_data = fl.audit(
        "y", "yp", sensitive_features="g", data=frame.set_axis(index).iloc[perm], **kw3
    )
    for other, want in ((moved, ref), (from_data, ref_data)):
        if vfr:  # counts only: equal to the last bit
            assert _payload(other) == _payload(want)
        else:  # with scores: their sums (mean score, calibration) may differ in the last bit
            assert _close(_payload(other), _payload(want))


# Note: sums of scores (a group's mean score, the calibration bins) are added in row order, so a permutation can
# move their last bit: those are compared to 1e-12. With y_prob *and* vfr=True, the calibration metric's resamples
# pick scores from blocks of records in their input order, so its flip rate is the same in distribution but not to
# the last bit under a permutation of the rows; the count metrics' resamples are drawn from the count table and do
# not see the order at all (tested above).
