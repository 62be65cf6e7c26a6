"""The package layout holds: layers, no import circle, no upward import, no module over 500 lines of code
(docstrings not counted), no in-function import of a fairlib module, and the notebooks mirror the modules."""

import ast
import functools
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "fairlib"
# layer of each top-level unit: a module may import only from its own layer or lower ones
LAYERS = {
    "core": 0,
    "mitigation": 1,
    "llm": 1,
    "vfr": 2,
    "mfarm": 2,
    "agent": 2,
    "handbook": 2,
    "runner": 3,
    "cli": 4,
}
PAPER_PACKAGES = ("vfr", "mfarm", "agent", "llm", "mitigation")


@functools.cache
def modules():
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        if p.name == "_modidx.py":
            continue
        parts = p.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def unit(mod):
    parts = mod.split(".")
    if len(parts) > 1 and parts[1] in PAPER_PACKAGES:
        return parts[1]
    if len(parts) > 1 and parts[1] in ("handbook", "cli", "runner"):
        return parts[1]
    return "core"


def is_face(mod) -> bool:
    "A package's `__init__` (its public face), as opposed to a module."
    return mod in modules() and modules()[mod].name == "__init__.py"


def imports(mod, path, *, nested=None):
    """fairlib modules imported by `mod` (absolute names); nested=True: only inside functions, False: only top level.

    An import that names a package (`import fairlib`, `from fairlib import x`, `from . import x`, `from ..vfr import
    y`) runs that package's `__init__` for its names: it is an edge to the package's face, whose own imports are its
    edges, so a circle through an `__init__` shows. `from .x import y` of a module `x` names the module only."""
    tree = ast.parse(path.read_text())
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    inner = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
    }
    mods, out = modules(), set()
    for n in ast.walk(tree):
        if nested is not None and (id(n) in inner) != nested:
            continue
        if isinstance(n, ast.ImportFrom):
            if n.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (n.level - 1)]
                target = ".".join(base + ([n.module] if n.module else []))
            else:
                target = n.module or ""
            if target != "fairlib" and not target.startswith("fairlib."):
                continue
            if is_face(target):
                out.add(target)
            for a in n.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in mods else target)
        elif isinstance(n, ast.Import):
            out |= {a.name for a in n.names if a.name == "fairlib" or a.name.startswith("fairlib.")}
    return out - {mod}


def graph():
    mods = modules()
    return {m: {t for t in imports(m, p, nested=False) if t in mods} for m, p in mods.items()}


def cycles(g) -> list:
    "Every circle a depth-first walk of the import graph `g` (module -> modules it imports) closes."
    state, stack, found = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(g.get(m, ())):
            if state.get(t) == 1:
                found.append(stack[stack.index(t) :] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    return found


def test_no_import_circle():
    "Edges into a package's `__init__` count: `htmlreport` taking the version from `fairlib` would close a circle."
    found = cycles(graph())
    assert not found, f"import circles: {found}"


def test_a_circle_through_a_package_face_is_seen(tmp_path):
    "The check can fail: a module that takes a name from its package's `__init__`, which imports it, is a circle."
    report = tmp_path / "report.py"
    report.write_text(
        "from . import __version__\nimport fairlib\nfrom .core import FairlibInputError\n"
    )
    assert imports("fairlib.report", report) == {"fairlib", "fairlib.core"}
    g = {"fairlib": {"fairlib.audit"}, "fairlib.audit": {"fairlib.report"}}
    assert cycles({**g, "fairlib.report": imports("fairlib.report", report)}) == [
        ["fairlib", "fairlib.audit", "fairlib.report", "fairlib"]
    ]
    assert cycles({**g, "fairlib.report": {"fairlib.core"}}) == []


def test_no_module_imports_the_package_face():
    "The version lives in `fairlib._version`: no module needs `fairlib/__init__`, which imports the audit."
    g = graph()
    assert {"fairlib._version", "fairlib.audit"} <= g["fairlib"]  # the face's own imports are edges
    assert {"fairlib.runner.runs", "fairlib.runner.registry"} <= g["fairlib.runner"]
    users = sorted(m for m, ts in g.items() if "fairlib" in ts)
    assert not users, f"modules that import the package __init__: {users}"


def test_no_import_from_a_lower_layer_back_up():
    up = [
        (m, t)
        for m, ts in graph().items()
        for t in ts
        if LAYERS[unit(t)] > LAYERS[unit(m)]
        or (LAYERS[unit(t)] == LAYERS[unit(m)] and unit(t) != unit(m) and unit(m) != "core")
    ]
    assert not up, f"imports that run back up a layer: {up}"


def test_the_runner_imports_only_the_core():
    "The reproduction machinery (fairlib.runner) sits on the shared core; `fairlib.cli` alone puts it beside the audit."
    g = graph()
    runner = {m for m in g if unit(m) == "runner"}
    assert {"fairlib.runner.registry", "fairlib.runner.runs", "fairlib.runner.cli"} <= runner
    out = sorted((m, t) for m in runner for t in g[m] if unit(t) not in ("core", "runner"))
    assert not out, f"runner modules that import above the core: {out}"
    users = sorted(
        m for m, ts in g.items() if unit(m) != "runner" and any(unit(t) == "runner" for t in ts)
    )
    assert users == ["fairlib.cli"], users


def test_no_in_function_import_of_a_fairlib_module():
    # lazy imports stay for heavy optional dependencies only; a fairlib module is imported at the top
    allowed = {"fairlib"}  # `import fairlib` for its version / path
    nested = {m: sorted(imports(m, p, nested=True) - allowed) for m, p in modules().items()}
    nested = {m: ts for m, ts in nested.items() if ts}
    assert not nested, f"in-function imports of fairlib modules: {nested}"


def test_notebooks_mirror_the_modules():
    "Every exported module comes from the notebook at the matching path (nbs/<package>/NN_<module>.ipynb)."
    wrong = []
    for nb in sorted((ROOT / "nbs").rglob("*.ipynb")):
        if "papers" in nb.parts or nb.name.startswith(("_", ".")):
            continue
        cells = json.loads(nb.read_text())["cells"]
        m = next(
            (
                re.search(r"#\|\s*default_exp\s+(\S+)", "".join(c["source"]))
                for c in cells
                if "default_exp" in "".join(c["source"])
            ),
            None,
        )
        assert m, f"{nb} has no default_exp"
        mod = m.group(1).split(".")
        where = str(nb.relative_to(ROOT))
        folder = Path(where).relative_to("nbs").parent.parts
        stem = re.sub(r"^\d+[a-z]?_", "", Path(where).stem)
        if tuple(mod[:-1]) != folder or mod[-1].lstrip("_") != stem:
            wrong.append((str(nb.relative_to(ROOT)), m.group(1)))
    assert not wrong, f"notebooks whose path does not name their module: {wrong}"


@pytest.mark.parametrize(
    "name", ["TIERS", "VARIANTS", "SPLITS", "DOMAINS", "audit_table", "TARGET"]
)
def test_one_name_one_meaning(name):
    "A public name is defined in one module only (fairlib.audit_table is the audit API's; mFARM's is mfarm_table)."
    homes = []
    for m, p in modules().items():
        for n in ast.parse(p.read_text()).body:
            targets = (
                [n.name]
                if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                else [t.id for t in getattr(n, "targets", []) if isinstance(t, ast.Name)]
            )
            if name in targets:
                homes.append(m)
    assert len(homes) <= 1, f"{name} is defined in {homes}"
