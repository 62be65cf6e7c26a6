"""One vocabulary (issue 8 §2): the public signatures of every fairlib module, checked for the old names.

Old names may keep working for one release only through `fairlib.core.renamed_arguments` (the wrapper
shows the new signature) or `fairlib.core.deprecated_alias` (a property, not a field); a public
parameter or result-dataclass field that still *declares* an old name fails here.
"""

import dataclasses
import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import fairlib

OLD_NAMES = {  # old name -> the name of the vocabulary (CONVENTION's table)
    "K": "n_resamples",
    "n_boot": "n_resamples",
    "n_sim": "n_resamples",
    "rng": "seed",
    "N": "resample_size",
    "ci95": "ci",
    "pvalue": "p_value",
    "note": "reason",
}
SKIP_MODULES = {"fairlib._modidx"}


def fairlib_modules():
    names = ["fairlib"]
    for m in pkgutil.walk_packages(fairlib.__path__, prefix="fairlib."):
        if m.name not in SKIP_MODULES and not m.name.rsplit(".", 1)[-1].startswith("_"):
            names.append(m.name)
    return sorted(names)


def _public(mod):
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    for n in names:
        obj = getattr(mod, n, None)
        if obj is None or inspect.ismodule(obj):
            continue
        home = getattr(obj, "__module__", None)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and home == mod.__name__:
            yield n, obj


def _params(f):
    try:
        sig = inspect.signature(f)  # follows __wrapped__: renamed_arguments shows the new names
    except (TypeError, ValueError):
        return []
    return [
        p
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def signatures(modname):
    "Rows (module, object, kind, name, annotation, default) for every public parameter and result field of a module."
    mod = importlib.import_module(modname)
    rows = []
    for name, obj in _public(mod):
        if inspect.isfunction(obj):
            rows += [
                (modname, name, "parameter", p.name, str(p.annotation), p.default)
                for p in _params(obj)
            ]
        elif inspect.isclass(obj):
            if dataclasses.is_dataclass(obj):
                rows += [
                    (modname, name, "field", f.name, str(f.type), f.default)
                    for f in dataclasses.fields(obj)
                    if not f.name.startswith("_")
                ]
            elif "__init__" in vars(obj):
                rows += [
                    (modname, name, "parameter", p.name, str(p.annotation), p.default)
                    for p in _params(obj.__init__)
                ]
            for mname, meth in vars(obj).items():
                if mname.startswith("_") or not inspect.isfunction(meth):
                    continue
                rows += [
                    (modname, f"{name}.{mname}", "parameter", p.name, str(p.annotation), p.default)
                    for p in _params(meth)
                ]
    return rows


def violations(rows):
    out = []
    for mod, obj, kind, name, ann, default in rows:
        if name in OLD_NAMES:
            out.append(f"{mod}.{obj}: {kind} `{name}` (use `{OLD_NAMES[name]}`)")
        elif name in ("degenerate", "degenerate_reason") and (
            "str" in ann or isinstance(default, str)
        ):
            out.append(
                f"{mod}.{obj}: {kind} `{name}` holds an explanation (use `reason`; a bool flag may stay)"
            )
    return out


MODULES = fairlib_modules()


def test_every_module_is_listed():
    assert {
        "fairlib.metrics",
        "fairlib.vfr",
        "fairlib.mfarm",
        "fairlib.plots",
        "fairlib.agent.floor",
    } <= set(MODULES)
    rows = [r for m in MODULES for r in signatures(m)]
    listed = {r[0] for r in rows}
    assert {
        "fairlib.metrics",
        "fairlib.vfr.axis1",
        "fairlib.stats",
    } <= listed  # a package's face defines nothing
    assert len(rows) > 200


@pytest.mark.parametrize("modname", MODULES)
def test_one_vocabulary(modname):
    bad = violations(signatures(modname))
    assert not bad, "old vocabulary in public signatures:\n  " + "\n  ".join(bad)


def test_the_checker_catches_old_names():
    from dataclasses import dataclass

    def f(y, *, K=10, rng=None, sensitive_features=None): ...

    @dataclass
    class R:
        ci95: tuple
        note: str | None = None
        degenerate: str | None = None
        flag_degenerate: bool = False

    rows = [("m", "f", "parameter", p.name, str(p.annotation), p.default) for p in _params(f)]
    rows += [("m", "R", "field", x.name, str(x.type), x.default) for x in dataclasses.fields(R)]
    found = {v.split("`")[1] for v in violations(rows)}
    assert found == {"K", "rng", "ci95", "note", "degenerate"}


def test_renamed_arguments_show_the_new_name_only():
    from fairlib.core import renamed_arguments

    @renamed_arguments(K="n_resamples")
    def g(x, *, n_resamples=5):
        return n_resamples

    rows = [("m", "g", "parameter", p.name, str(p.annotation), p.default) for p in _params(g)]
    assert violations(rows) == []
    with pytest.warns(DeprecationWarning):
        assert g(1, K=7) == 7


@pytest.mark.parametrize("heavy", ["torch", "transformers", "xgboost", "lightgbm", "catboost"])
def test_import_fairlib_does_not_import(heavy):
    code = f"import sys, fairlib, fairlib.metrics; print({heavy!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


# ---------------------------------------------------------------------------------------------------------------
# The layout of 0.2 moved every module (issue: one house and one book). Nothing public may break: every public
# name of 0.1 (`fixtures/public_names_0_1.json`, read from the 0.1 modules' `__all__`) must still resolve from its
# 0.1 module path, to the same object as its new home; old module paths and renamed names warn.
import json
import warnings
from pathlib import Path

from fairlib import _compat

PUBLIC_0_1 = json.loads((Path(__file__).parent / "fixtures" / "public_names_0_1.json").read_text())
OLD_PATHS = {m for m in PUBLIC_0_1 if m in _compat.MODULE_ALIASES}


def _resolve(modname, name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.import_module(modname)
        obj = getattr(mod, name)
    return obj, [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("modname", sorted(PUBLIC_0_1))
def test_every_public_name_of_0_1_still_resolves(modname):
    missing, silent_renames = [], []
    for name in PUBLIC_0_1[modname]:
        try:
            obj, warned = _resolve(modname, name)
        except (AttributeError, ImportError) as e:
            missing.append(f"{name}: {e}")
            continue
        if f"{modname}.{name}" in _compat.RENAMED and not warned:
            silent_renames.append(name)
    assert not missing, f"{modname}: public names of 0.1 that no longer resolve: {missing}"
    assert not silent_renames, (
        f"{modname}: renamed names that resolve without a DeprecationWarning: {silent_renames}"
    )


@pytest.mark.parametrize("modname", sorted(OLD_PATHS))
def test_old_module_paths_import_with_a_warning(modname):
    for m in [k for k in list(sys.modules) if k == modname or k.startswith(modname + ".")]:
        del sys.modules[m]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.import_module(modname)
    assert any(
        issubclass(w.category, DeprecationWarning) and modname in str(w.message) for w in caught
    )
    for name in PUBLIC_0_1[modname]:  # the old path gives the very objects of the new modules
        obj = getattr(mod, name)
        homes = _compat.MODULE_ALIASES[modname]
        new = _compat.RENAMED.get(f"{modname}.{name}", "").rpartition(".")[2] or name
        assert any(getattr(importlib.import_module(h), new, None) is obj for h in homes), (
            modname,
            name,
        )


def test_renamed_names_point_to_the_new_name():
    for old, new in _compat.RENAMED.items():
        mod, _, name = old.rpartition(".")
        obj, warned = _resolve(mod, name)
        nmod, _, nname = new.rpartition(".")
        assert obj is getattr(importlib.import_module(nmod), nname), old
        assert warned and new in str(warned[0].message), old


def test_moved_names_are_the_same_objects():
    "A name that left a module resolves there to its new home's object; served by the alias table it warns."
    for old, new in _compat.MOVED.items():
        mod, _, name = old.rpartition(".")
        served = name not in vars(
            importlib.import_module(mod)
        )  # else the module imports it for its own use
        obj, warned = _resolve(mod, name)
        nmod, _, nname = new.rpartition(".")
        assert obj is getattr(importlib.import_module(nmod), nname), old
        assert bool(warned) == served, old


def test_a_name_that_never_existed_is_an_attribute_error():
    for modname in ("fairlib.vfr", "fairlib.metrics", "fairlib.llm_server", "fairlib.mitigation"):
        with pytest.raises(AttributeError, match="no_such_name"):
            _resolve(modname, "no_such_name")
