"""The package layout holds: layers, no import circle, no upward import, no module over 500 lines, no in-function
import of a fairlib module, and the notebooks mirror the modules."""

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "fairlib"
MAX_LINES = 500
# layer of each top-level unit: a module may import only from its own layer or lower ones
LAYERS = {"core": 0, "mitigation": 1, "llm": 1, "vfr": 2, "mfarm": 2, "agent": 2, "handbook": 2, "cli": 3}
PAPER_PACKAGES = ("vfr", "mfarm", "agent", "llm", "mitigation")


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
    if len(parts) > 1 and parts[1] in ("handbook", "cli"):
        return parts[1]
    return "core"


def imports(mod, path, *, nested=None):
    "fairlib modules imported by `mod` (absolute names); nested=True only those inside functions, False only top level."
    tree = ast.parse(path.read_text())
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    inner = {
        id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)
    }
    out = set()
    for n in ast.walk(tree):
        if nested is not None and (id(n) in inner) != nested:
            continue
        if isinstance(n, ast.ImportFrom):
            if n.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (n.level - 1)]
                target = ".".join(base + ([n.module] if n.module else []))
            else:
                target = n.module or ""
            if not target.startswith("fairlib"):
                continue
            mods = modules()
            for a in n.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in mods else target)
        elif isinstance(n, ast.Import):
            out |= {a.name for a in n.names if a.name.startswith("fairlib.")}
    return out - {mod}


def graph():
    mods = modules()
    return {m: {t for t in imports(m, p, nested=False) if t in mods} for m, p in mods.items()}


def test_no_module_over_500_lines():
    big = {m: n for m, p in modules().items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"


def test_no_import_circle():
    g = graph()
    # package faces (__init__) re-export their own modules: leave out the edges into a package's face
    g = {m: {t for t in ts if not (modules()[t].name == "__init__.py")} for m, ts in g.items()}
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(g.get(m, ())):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t) :] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    assert not cycles, f"import circles: {cycles}"


def test_no_import_from_a_lower_layer_back_up():
    up = [
        (m, t)
        for m, ts in graph().items()
        for t in ts
        if LAYERS[unit(t)] > LAYERS[unit(m)]
        or (LAYERS[unit(t)] == LAYERS[unit(m)] and unit(t) != unit(m) and unit(m) != "core")
    ]
    assert not up, f"imports that run back up a layer: {up}"


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
        folder = nb.relative_to(ROOT / "nbs").parent.parts
        stem = re.sub(r"^\d+[a-z]?_", "", nb.stem)
        if tuple(mod[:-1]) != folder or mod[-1].lstrip("_") != stem:
            wrong.append((str(nb.relative_to(ROOT)), m.group(1)))
    assert not wrong, f"notebooks whose path does not name their module: {wrong}"


@pytest.mark.parametrize("name", ["TIERS", "VARIANTS", "SPLITS", "DOMAINS", "audit_table", "TARGET"])
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
