"""The Examples sections of fairlib.agent's public callables run as written (doctest), and every one has some.

numpydoc's validator (tools/check_numpydoc.py) checks that the sections are there; this runs them, so an example
whose output drifts from what the code returns fails here. Only the callables defined in fairlib.agent's own modules
are collected (names re-exported from the core, such as `majority_vote`, are checked where they live).
"""

import doctest
import inspect
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

import fairlib.agent as agent

matplotlib.use("Agg")


# fairlib.agent.claims, .coverage and .floorclaims (nbs/agent/11_claims, 10c_coverage, 11a_floorclaims) are the
# ledger's notebooks, documented in their own pass; their callables join
# this collection once they carry Examples (drop a module from this tuple then).
DOCUMENTED_ELSEWHERE = ("fairlib.agent.claims", "fairlib.agent.coverage", "fairlib.agent.floorclaims")


def _own_callables():
    out = []
    for name in sorted(agent.__all__):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = getattr(agent, name)
        mod = getattr(obj, "__module__", "")
        own = mod.startswith("fairlib.agent.") and mod not in DOCUMENTED_ELSEWHERE
        if callable(obj) and not inspect.ismodule(obj) and own:
            out.append(name)
    return out


NAMES = _own_callables()


def test_the_collection_is_not_empty():
    assert len(NAMES) > 60, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_docstring_examples_run(name):
    import matplotlib.pyplot as plt

    obj = getattr(agent, name)
    globs = {"np": np, "pd": pd, **{n: getattr(agent, n) for n in agent.__all__}}
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs=globs)
    assert sum(len(t.examples) for t in tests) > 0, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in tests:
                runner.run(t)
    finally:
        plt.close("all")
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) printed something else"
