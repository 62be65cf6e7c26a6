"""The reproduction machinery lives in `fairlib.runner`; its old module paths and the `fairlib.cli` names still work."""

import importlib
import importlib.util
import sys
import warnings

import pytest

import fairlib.cli
import fairlib.runner
from fairlib import _compat

OLD = {
    "fairlib.registry": "fairlib.runner.registry",
    "fairlib.runindex": "fairlib.runner.runindex",
    "fairlib.runs": "fairlib.runner.runs",
    "fairlib.writeback": "fairlib.runner.writeback",
}


@pytest.mark.parametrize("old", sorted(OLD))
def test_old_runner_paths_warn_and_give_the_same_objects(old):
    new = importlib.import_module(OLD[old])
    assert _compat.MODULE_ALIASES[old] == (OLD[old],)
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.import_module(old)
    assert any(
        issubclass(w.category, DeprecationWarning) and OLD[old] in str(w.message) for w in caught
    )
    assert new.__all__, new
    for name in new.__all__:
        assert getattr(mod, name) is getattr(new, name), (old, name)
    private = sorted(
        n
        for n, v in vars(new).items()
        if n.startswith("_") and not n.startswith("__") and callable(v)
    )
    assert all(getattr(mod, n) is getattr(new, n) for n in private), (
        old
    )  # e.g. writeback._author_cells


def test_the_old_paths_are_no_modules_of_their_own():
    "The moved files are gone, so an old path can only be the deprecated view (a stale copy cannot shadow it)."
    for old in OLD:
        assert importlib.util.find_spec(old).origin is None, (
            old
        )  # served by the alias finder, not read from a file


def test_runner_face_exports_every_module_name():
    mods = [
        fairlib.runner.registry,
        fairlib.runner.runindex,
        fairlib.runner.writeback,
        fairlib.runner.runs,
    ]
    mods.append(fairlib.runner.cli)
    names = {n for m in mods for n in m.__all__}
    assert set(fairlib.runner.__all__) == names
    for m in mods:
        for n in m.__all__:
            assert getattr(fairlib.runner, n) is getattr(m, n), n


def test_cli_keeps_the_runner_names_it_had():
    names = "NotebookFailed RunInterrupted build_index job_keys load_paper_meta load_profile load_registry plan_run"
    for name in names.split() + ["reproduce", "run_notebook"]:
        assert getattr(fairlib.cli, name) is getattr(fairlib.runner, name), name


def test_fairlib_reproduce_help_comes_from_the_runner(capsys):
    with pytest.raises(SystemExit) as e:
        fairlib.cli.main(["reproduce", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "usage: fairlib reproduce" in out and "--profile" in out and "--no-write-back" in out
    assert "--registry" not in out  # the test-only options stay hidden
