"""The Examples sections of `fairlib.mfarm`'s public callables run as written (doctest).

The docstrings are the API reference; an example whose output is not what the code prints would teach the
wrong thing, so every `>>>` line of the public callables of these modules is executed and compared.
"""

import doctest
import importlib
import warnings

import pytest

MODULES = (
    "fairlib.mfarm.score",
    "fairlib.mfarm.matrix",
    "fairlib.mfarm.mimic",
    "fairlib.mfarm.cleaning",
    "fairlib.mfarm.instrument",
    "fairlib.mfarm.benchmark",
    "fairlib.mfarm.experiments",
    "fairlib.mfarm.plots",
    "fairlib.mfarm.twin",
    "fairlib.mfarm.twin_ed",
    "fairlib.mfarm.claims",
    "fairlib.mfarm.submetrics",
    "fairlib.mfarm.reliability",
)


def _public(modname):
    mod = importlib.import_module(modname)
    for name in mod.__all__:
        obj = getattr(mod, name)
        if callable(obj) and getattr(obj, "__module__", None) == modname:
            yield f"{modname}.{name}", obj


CASES = [case for m in MODULES for case in _public(m)]


@pytest.mark.parametrize("name,obj", CASES, ids=[c[0] for c in CASES])
def test_docstring_examples_run(name, obj):
    tests = doctest.DocTestFinder(recurse=False).find(obj, name=name, globs={})
    examples = sum(len(t.examples) for t in tests)
    assert examples > 0, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for t in tests:
            runner.run(t)
    assert runner.failures == 0, f"{runner.failures} of {examples} example(s) of {name} differ"


def test_the_runner_catches_a_wrong_example():
    "The check above can fail: an example whose printed output is wrong is counted as a failure."

    def f():
        """
        >>> 1 + 1
        3
        """

    runner = doctest.DocTestRunner()
    for t in doctest.DocTestFinder().find(f, globs={}):
        runner.run(t, out=lambda s: None)
    assert runner.failures == 1
