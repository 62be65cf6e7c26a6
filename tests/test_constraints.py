"""Every public function and class of fairlib declares its argument constraints (fairlib.constraints).

`public_callables()` walks every module's `__all__` (functions and classes; result classes, which fairlib builds
itself as outputs, and exceptions are left out). A callable with a parameter that has no declared constraint is a
failure, unless it is listed in tests/fixtures/undeclared_constraints.txt, the shrinking list of what was public
before the mechanism existed and is not yet declared. The list may only shrink: an entry that is now declared, or no
longer exists, fails the test too, so the file always states exactly what remains.
"""

import importlib
import inspect
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import fairlib
from fairlib.constraints import (
    Array,
    Interval,
    Options,
    Probabilities,
    Share,
    Unchecked,
    constrained,
    declared,
    undeclared,
)
from fairlib.core import FairlibInputError
from fairlib.results import Result

PENDING = Path(__file__).parent / "fixtures" / "undeclared_constraints.txt"


def public_callables():
    out = {}
    for m in pkgutil.walk_packages(fairlib.__path__, "fairlib."):
        if m.name.split(".")[-1].startswith("_"):
            continue
        mod = importlib.import_module(m.name)
        for n in getattr(mod, "__all__", []):
            o = getattr(mod, n, None)
            if (inspect.isfunction(o) or inspect.isclass(o)) and getattr(
                o, "__module__", ""
            ) == m.name:
                if inspect.isclass(o) and issubclass(o, (BaseException, Result)):
                    continue  # exceptions take a message; Result classes are outputs built by fairlib itself

                out[f"{m.name}.{n}"] = o
    return out


def pending():
    if not PENDING.exists():
        return set()
    return {
        ln.split("#")[0].strip()
        for ln in PENDING.read_text().splitlines()
        if ln.split("#")[0].strip()
    }


def missing_now():
    return {name: undeclared(o) for name, o in public_callables().items() if undeclared(o)}


def test_every_public_callable_declares_its_arguments():
    missing = missing_now()
    new = {k: v for k, v in missing.items() if k not in pending()}
    assert not new, (
        "public callables without declared constraints (declare them with fairlib.constraints.constrained):\n"
        + "\n".join(f"  {k}: {v}" for k, v in sorted(new.items()))
    )


def test_pending_list_only_shrinks():
    missing, listed = missing_now(), pending()
    stale = sorted(listed - set(missing))
    assert not stale, f"now declared or gone, remove from {PENDING.name}: {stale}"


def test_coverage_is_reported():
    "The share of public callables with complete declarations, printed for the closing note (and bounded below)."
    allc = public_callables()
    done = len(allc) - len(missing_now())
    print(f"declared: {done} of {len(allc)} public callables")
    assert len(allc) > 300  # the walk finds the public API, not an empty package


def test_declarations_refuse_what_they_describe():
    "Each declared Interval / Options / Array constraint refuses a value outside it (no declaration is vacuous)."
    bad = {Interval: [float("nan"), "abc"], Options: ["__not_a_choice__"], Array: ["abc", None]}
    checked = 0
    for name, o in public_callables().items():
        for arg, c in declared(o).items():
            for kind, values in bad.items():
                if type(c) is kind:
                    for v in values:
                        assert c.problem(v) is not None, (
                            f"{name}({arg}={v!r}) passes {c.description}"
                        )
                        checked += 1
    assert checked > 0


def test_message_names_function_argument_value_and_rule():
    @constrained(x=Probabilities, level=Share, how=Options("a", "b"), note=Unchecked("free text"))
    def f(x, level=0.5, how="a", note=None):
        return float(np.mean(x))

    assert f([0.2, 0.4], note=object()) == pytest.approx(0.3)
    with pytest.raises(FairlibInputError) as e:
        f([0.2], level=1.5)
    msg = str(e.value)
    assert "f()" in msg and "`level`" in msg and "1.5" in msg and "a share in [0, 1]" in msg
    assert e.value.argument == "level"
    with pytest.raises(FairlibInputError, match="`x`.*NaN"):
        f([0.2, np.nan])
    with pytest.raises(FairlibInputError, match="`x`.*dtype bool"):
        f(np.array([True, False]))


def test_typo_in_a_declaration_fails_at_import_time():
    with pytest.raises(TypeError, match="unknown parameter"):
        constrained(alpah=Share)(lambda alpha: alpha)


def test_estimator_params_checked_at_fit():
    from sklearn.base import BaseEstimator

    @constrained(k=Interval(1, integer=True))
    class Est(BaseEstimator):
        def __init__(self, k=1):
            self.k = k

        def fit(self, X, y=None):
            return self

    Est(k=0)  # sklearn convention: the constructor only stores
    with pytest.raises(FairlibInputError, match="`k`"):
        Est(k=0).fit([[1]])
    assert Est(k=2).fit([[1]]).k == 2
