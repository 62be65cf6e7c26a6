"""Site settings (issue 9 §3): a typo is an error naming it, never a silent fall-back to the synthetic twin."""

from pathlib import Path

import pytest

from fairlib import config
from fairlib.config import SETTINGS_KEYS, describe_settings, get_setting, settings_path
from fairlib.core import FairlibInputError


@pytest.fixture
def ini(tmp_path, monkeypatch):
    "Write a settings file and point FAIRLIB_SETTINGS at it."
    for k in list(__import__("os").environ):
        if k.startswith("FAIRLIB_"):
            monkeypatch.delenv(k)

    def write(text):
        p = tmp_path / "site.ini"
        p.write_text(text)
        monkeypatch.setenv("FAIRLIB_SETTINGS", str(p))
        return p

    return write


def test_values_precedence_and_relative_paths(ini, monkeypatch, tmp_path):
    ini("[fairlib]\ntexas100x_csv = data/t.csv\nn_jobs = 2\n")
    assert get_setting("texas100x_csv") == (tmp_path / "data" / "t.csv").resolve()
    assert get_setting("n_jobs") == 2
    monkeypatch.setenv("FAIRLIB_N_JOBS", "3")
    assert get_setting("n_jobs") == 3
    assert get_setting("mimic_root") is None  # empty = not configured
    d = describe_settings().set_index("key")
    assert (
        d.loc["n_jobs", "source"] == "environment"
        and d.loc["texas100x_csv", "source"] == "settings.ini"
    )


@pytest.mark.parametrize(
    "text, needles",
    [
        (
            "[fairlib]\ntexas_100x_csv = /x.csv\n",
            ["line 2", "unknown key 'texas_100x_csv'", "did you mean 'texas100x_csv'"],
        ),
        ("[fairlib]\nmimic_rot = /m\n", ["unknown key 'mimic_rot'", "'mimic_root'"]),
        (
            "[fairlb]\ntexas100x_csv = /x.csv\n",
            ["line 1", "unknown section [fairlb]", "did you mean 'fairlib'"],
        ),
        ("[Fairlib]\nmimic_root = /m\n", ["unknown section [Fairlib]"]),
        (
            "[fairlib]\nn_jobs = -1\n[paths]\nmimic_root = /m\n",
            ["line 3", "unknown section [paths]"],
        ),
        ("texas100x_csv = /x.csv\n", ["not a valid settings file", "section header"]),
        ("[fairlib]\nn_jobs = 1\nn_jobs = 2\n", ["not a valid settings file", "n_jobs"]),
        ("[fairlib]\nn_jobs = many\n", ["argument `n_jobs`", "must be an integer", "site.ini"]),
        ("[fairlib]\nn_jobs = 0\n", ["non-zero"]),
    ],
    ids=[
        "misspelt-key",
        "misspelt-key-2",
        "misspelt-section",
        "section-case",
        "extra-section",
        "no-section-header",
        "duplicate-key",
        "non-integer",
        "zero-jobs",
    ],
)
def test_settings_file_mistakes_are_named(ini, text, needles):
    p = ini(text)
    with pytest.raises(FairlibInputError) as e:
        get_setting("n_jobs") if "n_jobs" in text and "section" not in needles[0] else get_setting(
            "texas100x_csv"
        )
    msg = str(e.value)
    for n in needles:
        assert n in msg, (n, msg)
    if "site.ini" not in needles and "not a valid" not in needles[0] and "n_jobs" not in needles[0]:
        assert str(p) in msg


def test_missing_settings_file_named_by_environment_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("FAIRLIB_SETTINGS", str(tmp_path / "nope.ini"))
    with pytest.raises(FairlibInputError, match="FAIRLIB_SETTINGS.*nope.ini.*not a file"):
        get_setting("texas100x_csv")
    with pytest.raises(FairlibInputError, match="FAIRLIB_SETTINGS"):
        settings_path()
    monkeypatch.setenv("FAIRLIB_SETTINGS", "")  # empty = unset: the checkout's settings.ini
    assert settings_path() == config.repo_root() / "settings.ini"


@pytest.mark.parametrize(
    "env, suggestion",
    [
        ("FAIRLIB_TEXAS_CSV", "FAIRLIB_TEXAS100X_CSV"),
        ("FAIRLIB_MIMIC_ROOTS", "FAIRLIB_MIMIC_ROOT"),
        ("FAIRLIB_SETTING", "FAIRLIB_SETTINGS"),
        ("FAIRLIB_NJOBS", "FAIRLIB_N_JOBS"),
    ],
    ids=["texas", "mimic", "settings", "n_jobs"],
)
def test_unknown_environment_key_is_an_error_with_suggestion(monkeypatch, env, suggestion):
    monkeypatch.setenv(env, "/x")
    with pytest.raises(
        FairlibInputError, match=f"environment variable {env} names no fairlib setting"
    ) as e:
        get_setting("cache_dir")
    assert suggestion in str(e.value)


def test_unknown_key_argument():
    with pytest.raises(FairlibInputError, match="did you mean 'texas100x_csv'"):
        get_setting("texas100x")
    with pytest.raises(FairlibInputError, match="argument `key`"):
        get_setting(3)


def test_every_key_of_the_checked_in_settings_file_is_known():
    assert set(config._read_ini(config.repo_root() / "settings.ini")) <= set(SETTINGS_KEYS)


def test_a_typo_no_longer_falls_back_to_the_twin(ini, tmp_path):
    """The issue's case: `texas100x_cvs = <real file>` used to leave texas100x_csv empty -> synthetic twin."""
    real = tmp_path / "texas.csv"
    real.write_text("x\n")
    ini(f"[fairlib]\ntexas100x_cvs = {real}\n")
    from fairlib.vfr.cohort import load_cohort

    with pytest.raises(FairlibInputError, match="unknown key 'texas100x_cvs'"):
        load_cohort("auto", n=10)


def test_outside_a_checkout_nothing_resolves_beside_the_package(tmp_path):
    """Installed from a wheel (simulated: the package copied alone onto sys.path): cache under $XDG_CACHE_HOME,
    settings from $XDG_CONFIG_HOME, figures/runs under the working directory."""
    import shutil, subprocess, sys, json

    site, work, home = tmp_path / "site", tmp_path / "work", tmp_path / "home"
    shutil.copytree(
        config.repo_root() / "fairlib",
        site / "fairlib",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    work.mkdir()
    env = {
        k: v
        for k, v in __import__("os").environ.items()
        if not k.startswith(("FAIRLIB_", "PYTHON"))
    }
    env.update(
        PYTHONPATH=str(site),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    probe = (
        "import json, fairlib; from fairlib.config import get_setting, settings_path, checkout_root\n"
        "from fairlib.report import paper_dirs\nfig, wk = paper_dirs('probe')\n"
        "print(json.dumps([fairlib.__file__, str(checkout_root()), str(get_setting('cache_dir')), "
        "str(settings_path()), str(fig), str(wk)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    pkg, root, cache, sett, fig, wk = json.loads(out.stdout.splitlines()[-1])
    assert pkg.startswith(str(site)) and root == "None"
    assert cache == str(home / ".cache" / "fairlib") and sett == str(
        home / ".config" / "fairlib" / "settings.ini"
    )
    assert Path(fig).is_relative_to(work) and Path(wk).is_relative_to(work)
