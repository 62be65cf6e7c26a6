"""The Examples sections of fairlib.vfr's, fairlib.agent's and fairlib.runner's public callables run as written
(doctest), and every one has some.

numpydoc's validator (tools/check_numpydoc.py) checks that the sections are there; this runs them, so an example
whose output drifts from what the code returns fails here. Only the callables defined in each package's own modules
are collected (names re-exported from the core, such as `verdict_flip_rate` or `majority_vote`, are checked where
they live).
"""

import doctest
import importlib
import inspect
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

# the ledger's notebooks (nbs/vfr/13_claims, nbs/agent/11_claims, 10c_coverage, 11a_floorclaims) are documented in
# their own pass; their callables join this collection once they carry Examples (drop a module from its tuple then)
PACKAGES = {
    "fairlib.vfr": ("fairlib.vfr.claims",),
    "fairlib.agent": (
        "fairlib.agent.claims",
        "fairlib.agent.coverage",
        "fairlib.agent.floorclaims",
    ),
    # the runner's examples plan runs and write small files in temporary folders; those that would
    # execute paper notebooks (reproduce, run_notebook) are marked `# doctest: +SKIP`
    "fairlib.runner": (),
}


def _own_callables(package, elsewhere):
    pkg = importlib.import_module(package)
    out = []
    for name in sorted(pkg.__all__):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = getattr(pkg, name)
        mod = getattr(obj, "__module__", "")
        if (
            callable(obj)
            and not inspect.ismodule(obj)
            and mod.startswith(package + ".")
            and mod not in elsewhere
        ):
            out.append(name)
    return out


AT_LEAST = {
    "fairlib.vfr": 50,
    "fairlib.agent": 60,
    "fairlib.runner": 10,
}  # more own callables than this in each package's __all__
NAMES = {p: _own_callables(p, e) for p, e in PACKAGES.items()}
CASES = [(p, n) for p, names in NAMES.items() for n in names]


@pytest.mark.parametrize("package", list(PACKAGES))
def test_the_collection_is_not_empty(package):
    assert len(NAMES[package]) > AT_LEAST[package], NAMES[package]


@pytest.mark.parametrize("package,name", CASES, ids=[f"{p}.{n}" for p, n in CASES])
def test_docstring_examples_run(package, name):
    import matplotlib.pyplot as plt

    pkg = importlib.import_module(package)
    obj = getattr(pkg, name)
    globs = {"np": np, "pd": pd, **{n: getattr(pkg, n) for n in pkg.__all__}}
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
