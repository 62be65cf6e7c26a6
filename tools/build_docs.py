#!/usr/bin/env python
"""Build the documentation site from the notebooks, offline, into `_site/`.

    python tools/build_docs.py              # stage, check the API imports, sphinx-build, publish _site/
    python tools/build_docs.py --if-stale   # do nothing when _site/ was built from the same inputs

Steps (`make docs` runs the first form):

1. **Stage** every notebook under `nbs/` (globbed now, so notebooks that move between folders are found
   where they are) into `_docs_build/src/`, keeping its path relative to `nbs/` so links between
   notebooks keep working. On the way each code cell loses its nbdev `#|` directive lines; cells marked
   `#| hide` (or `#| include: false`) are dropped, and so are the `nbdev_export()` calls and cells that
   are empty once their directives are gone. `#| echo: false` keeps only the output and
   `#| output: false` only the source. A notebook without a `# heading` gets one from its file name.
2. **Tables of contents**: `library.md` has one toctree per folder of library notebooks (core = the
   notebooks directly in `nbs/`, then `vfr/`, `mfarm/`, `llm/`, `agent/`, `mitigation/`, `runner/` and any other
   folder that exists); `papers.md` one toctree per paper of `nbs/papers/<paper>/`. A page of `docs/` that no
   toctree lists is added at the end of the landing page's hidden toctree (so it is in the navigation, and
   Sphinx does not refuse it as an orphan).
3. **API pages**: one page per public module of the `fairlib` package (walked with pkgutil; `_modidx`
   and every module whose name starts with `_` are skipped), each an `automodule` with its members, their
   numpydoc sections rendered by napoleon. Each module is imported first, in a child process: an import failure
   fails the build with its traceback. `api/index` lists the top-level names (`import fairlib as fl`) first, each
   with its one-line summary and a link to where it is documented, then the module pages by package.
   **The CLI page**: `docs/cli.md` gets its reference generated from the `fairlib` command's own argparse parser
   (one section per subcommand: usage, every option with its default, the epilog) and an example run of
   `fairlib audit` on the handbook chapter's simulated records, run during the build; new options appear by
   themselves. `docs/getting-started.md` is a MyST notebook whose cells run at each build.
4. **sphinx-build** (`-W --keep-going`: any warning fails the build, a broken cross-reference or toctree
   entry included; see docs/conf.py for the few notebook-content warnings that are tolerated) into
   `_docs_build/html`, then copied to `_site/` only when it succeeded. A stamp of the inputs' hash is
   kept in `_site/` for `--if-stale`.

No network is used: no intersphinx, no CDN assets, the notebooks are rendered with the outputs they carry
(nb_execution_mode "off"; only the getting-started page runs, on data that ships with fairlib).
"""

from __future__ import annotations
import argparse, copy, hashlib, importlib, inspect, json, os, pkgutil, re, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
DOCS = ROOT / "docs"
PKG = ROOT / "fairlib"
BUILD = ROOT / "_docs_build"
STAGE = BUILD / "src"
HTML = BUILD / "html"
DOCTREES = BUILD / "doctrees"
SITE = ROOT / "_site"
STAMP = ".fairlib-docs-stamp"
PAPERS = "papers"

# Display names and order of the known folders; any other folder follows, alphabetically, under its own name.
LIBRARY_GROUPS = {
    "": "Core",
    "vfr": "VFR-Audit",
    "mfarm": "mFARM",
    "llm": "LLM scoring",
    "agent": "Clinical LLM agents",
    "mitigation": "Mitigation",
    "runner": "Reproduction runner",
}
PAPER_GROUPS = {
    "classification_bias": "Classification bias metrics (handbook chapter)",
    "vfr": "VFR-Audit",
    "mfarm": "mFARM",
    "fairmedagent": "FairMedAgent",
}

DIRECTIVE = re.compile(r"^\s*#\s*\|\s*(.*)$")
NBDEV_EXPORT = re.compile(
    r"^\s*(from\s+nbdev(\.\w+)*\s+import\s+[\w, ]+|import\s+nbdev(\.\w+)*"
    r"|(nbdev\.)?nbdev_export\(.*\))\s*$"
)


def log(msg: str) -> None:
    print(f"[build_docs] {msg}", flush=True)


# --- 1. staging ---------------------------------------------------------------------------------------------------


def skipped_dir(part: str) -> bool:
    return part.startswith((".", "_"))


def find_notebooks() -> list[Path]:
    "Every notebook under nbs/, relative to nbs/, skipping hidden / private folders and checkpoints."
    out = []
    for p in sorted(NBS.rglob("*.ipynb")):
        rel = p.relative_to(NBS)
        if any(skipped_dir(part) for part in rel.parts[:-1]) or rel.name.startswith((".", "_")):
            continue
        out.append(rel)
    return out


def _source(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _directives(src: str) -> tuple[list[str], str]:
    "nbdev / Quarto `#|` directive lines of a code cell (normalised) and the source without them."
    flags, keep = [], []
    for line in src.splitlines():
        m = DIRECTIVE.match(line)
        if m:
            flags.append(re.sub(r"\s+", " ", m.group(1).strip()).lower())
        else:
            keep.append(line)
    return flags, "\n".join(keep).strip("\n")


def _is_nbdev_export(src: str) -> bool:
    "A cell that only imports nbdev and calls nbdev_export() (e.g. `import nbdev; nbdev.nbdev_export()`)."
    stmts = [
        s
        for line in src.splitlines()
        if not line.strip().startswith("#")
        for s in line.split(";")
        if s.strip()
    ]
    return bool(stmts) and all(NBDEV_EXPORT.match(s) for s in stmts) and "nbdev_export" in src


def clean_notebook(nb: dict, title: str) -> dict:
    "The notebook as the site shows it (see the module docstring)."
    nb = copy.deepcopy(nb)
    cells = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            flags, src = _directives(_source(cell))
            if "hide" in flags or "include: false" in flags or _is_nbdev_export(src):
                continue
            if not src.strip() and not cell.get("outputs"):
                continue
            tags = list(cell.get("metadata", {}).get("tags", []))
            if "echo: false" in flags:
                tags.append("remove-input")
            if "output: false" in flags:
                tags.append("remove-output")
            cell["source"] = src
            cell.setdefault("metadata", {})
            if tags:
                cell["metadata"]["tags"] = sorted(set(tags))
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
        cells.append(cell)
    has_title = any(
        c.get("cell_type") == "markdown" and re.search(r"^# \S", _source(c), re.M) for c in cells
    )
    if not has_title:
        head = {"cell_type": "markdown", "metadata": {}, "source": f"# {title}"}
        if any("id" in c for c in cells):
            head["id"] = "fairlib-docs-title"
        cells.insert(0, head)
    nb["cells"] = cells
    md = nb.setdefault("metadata", {})
    md.setdefault(
        "kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"}
    )
    md.setdefault("language_info", {"name": "python"})
    nb.setdefault("nbformat", 4)
    nb.setdefault("nbformat_minor", 5)
    return nb


def _title_from_name(rel: Path) -> str:
    stem = re.sub(r"^\d+[a-z]?_", "", rel.stem)
    return stem.replace("_", " ").strip().capitalize() or rel.stem


def write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _toctree(caption: str, entries: list[str]) -> str:
    body = "\n".join(entries)
    return f"```{{toctree}}\n:maxdepth: 1\n:caption: {caption}\n\n{body}\n```\n"


def _group_order(groups: dict[str, list], names: dict[str, str]) -> list[str]:
    known = [g for g in names if g in groups]
    return known + sorted(g for g in groups if g not in names)


def stage(notebooks: list[Path]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    "Write the cleaned notebooks and docs/ pages into STAGE; returns (library groups, paper groups) of docnames."
    if STAGE.exists():
        shutil.rmtree(STAGE)
    STAGE.mkdir(parents=True)
    for f in sorted(DOCS.rglob("*")):
        if f.is_file() and f.name != "conf.py" and "__pycache__" not in f.parts:
            dst = STAGE / f.relative_to(DOCS)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst)
    library, papers = {}, {}
    for rel in notebooks:
        try:
            nb = json.loads((NBS / rel).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SystemExit(f"build_docs: cannot read nbs/{rel}: {e}")
        out = STAGE / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        cleaned = clean_notebook(nb, _title_from_name(rel))
        out.write_text(json.dumps(cleaned, indent=1, ensure_ascii=False), encoding="utf-8")
        docname = rel.with_suffix("").as_posix()
        if rel.parts[0] == PAPERS:
            if len(rel.parts) < 3:
                raise SystemExit(f"build_docs: nbs/{rel} is not inside nbs/papers/<paper>/")
            papers.setdefault(rel.parts[1], []).append(docname)
        else:
            library.setdefault(rel.parts[0] if len(rel.parts) > 1 else "", []).append(docname)
    return library, papers


TOCTREE = re.compile(r"```\{toctree\}\n(.*?)```", re.S)


def _toctree_entries(text: str) -> set[str]:
    "Docnames listed by the toctrees of a MyST page (`Title <name>` entries included)."
    out = set()
    for block in TOCTREE.findall(text):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith(":"):
                m = re.search(r"<([^<>]+)>$", line)
                out.add((m.group(1) if m else line).removesuffix(".md").removesuffix(".ipynb"))
    return out


def add_unlisted_pages() -> list[str]:
    "Append the top-level docs pages no toctree lists to index.md's hidden toctree; returns their names."
    index = STAGE / "index.md"
    pages = {p.stem: p.read_text(encoding="utf-8") for p in STAGE.glob("*.md")}
    listed = set().union(*(_toctree_entries(t) for t in pages.values()))
    missing = sorted(set(pages) - listed - {"index"})
    if not missing:
        return []
    text = pages["index"]
    block = next((m for m in TOCTREE.finditer(text) if ":hidden:" in m.group(1)), None)
    if block is None:
        raise SystemExit(f"build_docs: docs/index.md has no hidden toctree to add {missing} to")
    body = block.group(1).rstrip("\n") + "\n" + "".join(f"{m}\n" for m in missing)
    write_if_changed(index, text[: block.start(1)] + body + text[block.end(1) :])
    return missing


def write_tocs(library: dict[str, list[str]], papers: dict[str, list[str]]) -> None:
    for name in ("library", "papers", "api/index"):
        if (STAGE / f"{name}.ipynb").exists() or (STAGE / f"{name}.md").exists():
            raise SystemExit(
                f"build_docs: nbs/ or docs/ holds {name}, the name of a generated page"
            )
    lib = [
        "# Library notebooks\n",
        "The library is written as nbdev notebooks: each one is the source of a `fairlib` module, with its "
        "documentation and tests beside the code. They are grouped by folder of `nbs/`.\n",
    ]
    lib += [
        _toctree(LIBRARY_GROUPS.get(g, g), library[g])
        for g in _group_order(library, LIBRARY_GROUPS)
    ]
    write_if_changed(STAGE / "library.md", "\n".join(lib))
    pap = [
        "# Paper notebooks\n",
        "Each paper's notebooks in `nbs/papers/<paper>/` reproduce its tables and figures; `00_methods` records "
        "every decision where the paper is ambiguous or its code departs from its text.\n",
    ]
    pap += [_toctree(PAPER_GROUPS.get(g, g), papers[g]) for g in _group_order(papers, PAPER_GROUPS)]
    write_if_changed(STAGE / "papers.md", "\n".join(pap))


# --- 2b. the CLI page ------------------------------------------------------------------------------------------------
CLI_PAGE = "cli.md"
CLI_REFERENCE, CLI_EXAMPLE = "<!-- fairlib-cli-reference -->", "<!-- fairlib-cli-example -->"
CLI_COLUMNS = "100"  # argparse wraps its help to the terminal width: a fixed width makes the page reproducible


def _cli_main():
    "The `main` of the `fairlib` command (its console-script entry point; fairlib.cli:main when not installed)."
    from importlib.metadata import entry_points

    eps = list(entry_points(group="console_scripts", name="fairlib"))
    target = eps[0].value if eps else "fairlib.cli:main"
    mod, _, func = target.partition(":")
    sys.path.insert(0, str(ROOT))
    return getattr(importlib.import_module(mod), func)


def cli_parser() -> argparse.ArgumentParser:
    "The `fairlib` command's parser, caught when its main() starts parsing (nothing is run)."

    class Caught(Exception):
        pass

    def catch(self, *args, **kwargs):
        raise Caught(self)

    main, original = _cli_main(), argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = catch
    try:
        main([])
    except Caught as c:
        return c.args[0]
    finally:
        argparse.ArgumentParser.parse_args = original
    raise SystemExit(
        "build_docs: the fairlib command's main() returned without parsing its arguments"
    )


def _md_cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | what it is | default |", "| --- | --- | --- |"]
    for a in parser._actions:
        if a.help == argparse.SUPPRESS or isinstance(
            a, (argparse._HelpAction, argparse._SubParsersAction)
        ):
            continue
        if a.option_strings:
            name = ", ".join(a.option_strings)
            if a.nargs != 0:
                meta = a.metavar or a.dest.upper()
                name += f" {meta}" + (" ..." if a.nargs in ("+", "*") else "")
        else:
            name = a.metavar or a.dest
        if a.required:
            default = "required"
        elif a.nargs == 0 or a.default in (None, argparse.SUPPRESS):
            default = ""
        else:
            default = f"`{a.default}`"
        rows.append(f"| `{name}` | {_md_cell(a.help or '')} | {default} |")
    return rows


def cli_reference(parser: argparse.ArgumentParser) -> str:
    "Markdown for every subcommand of `parser`: summary, description, usage, options, epilog."
    subs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if subs is None:
        raise SystemExit("build_docs: the fairlib command has no subcommands to document")
    summaries = {c.dest: c.help for c in subs._choices_actions}
    out = []
    for name, sub in subs.choices.items():
        out.append(f"### `{sub.prog}`\n")
        if summaries.get(name):
            line = _md_cell(summaries[name])
            out.append(f"{line[:1].upper()}{line[1:]}.\n")
        if sub.description:
            out.append(" ".join(sub.description.split()) + "\n")
        out.append(f"```text\n{sub.format_usage().strip()}\n```\n")
        out.append("\n".join(_option_rows(sub)) + "\n")
        if sub.epilog:
            out.append(f"```text\n{sub.epilog.strip()}\n```\n")
    return "\n".join(out)


def cli_example() -> str:
    "Markdown of a `fairlib audit` run on the handbook chapter's simulated records, run now."
    sys.path.insert(0, str(ROOT))
    from fairlib.handbook import biased_classifier_example

    d = BUILD / "cli-example"
    d.mkdir(parents=True, exist_ok=True)
    biased_classifier_example(n=1000, seed=42).to_csv(d / "chapter_example.csv", index=False)
    args = [
        "audit",
        "chapter_example.csv",
        "--y-true",
        "y_true",
        "--y-pred",
        "y_pred",
        "--sensitive",
        "group",
    ]
    env = {**os.environ, "COLUMNS": CLI_COLUMNS, "PYTHONPATH": str(ROOT)}
    p = subprocess.run(
        [sys.executable, "-m", "fairlib.cli", *args], cwd=d, capture_output=True, text=True, env=env
    )
    if p.returncode:
        raise SystemExit(
            f"build_docs: the CLI example failed (exit {p.returncode}):\n{p.stdout}{p.stderr}"
        )
    head = "\n".join((d / "chapter_example.csv").read_text().splitlines()[:4])
    return (
        "The handbook chapter's simulated classifier (1,000 synthetic records) written to a CSV file, first lines:\n\n"
        f"```text\n{head}\n```\n\nThe audit, as run while this page was built:\n\n"
        f"```text\n$ fairlib {' '.join(args)}\n{p.stdout.rstrip()}\n```\n\n"
        f"Exit status {p.returncode}. `--out report.html` adds the standalone HTML report, `--json result.json` the "
        "result as JSON, `--vfr` each verdict's flip rate.\n"
    )


def write_cli_page() -> None:
    "Fill the generated parts of the staged cli.md (the page must keep both markers)."
    page = STAGE / CLI_PAGE
    if not page.is_file():
        raise SystemExit(f"build_docs: docs/{CLI_PAGE} is missing")
    text = page.read_text(encoding="utf-8")
    for mark in (CLI_REFERENCE, CLI_EXAMPLE):
        if text.count(mark) != 1:
            raise SystemExit(f"build_docs: docs/{CLI_PAGE} must hold the line {mark} once")
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = CLI_COLUMNS
    try:
        text = text.replace(CLI_REFERENCE, cli_reference(cli_parser())).replace(
            CLI_EXAMPLE, cli_example()
        )
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    write_if_changed(page, text)


# --- 3. API pages ---------------------------------------------------------------------------------------------------


def public_modules() -> list[str]:
    "fairlib and its public submodules (pkgutil walk of the checkout's package, no import needed)."
    mods = ["fairlib"]
    for m in pkgutil.walk_packages([str(PKG)], "fairlib."):
        if any(part.startswith("_") for part in m.name.split(".")[1:]):
            continue  # _modidx and private modules
        mods.append(m.name)
    return sorted(mods)


def check_imports(mods: list[str]) -> None:
    "Import every module in a child process (the checkout first on sys.path); any failure fails the build."
    code = (
        "import importlib, sys, traceback\nsys.path.insert(0, sys.argv[1])\nbad = 0\n"
        "for m in sys.argv[2:]:\n"
        "    try: importlib.import_module(m)\n"
        "    except BaseException:\n"
        "        bad += 1; print(f'--- {m}'); traceback.print_exc(file=sys.stdout)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    env = {**os.environ, "MPLBACKEND": "Agg"}
    p = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), *mods],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if p.returncode:
        raise SystemExit(
            f"build_docs: fairlib modules fail to import (the API pages need them):\n{p.stdout}{p.stderr}"
        )


def _is_package(mod: str) -> bool:
    return mod == "fairlib" or (PKG.joinpath(*mod.split(".")[1:]) / "__init__.py").is_file()


def _exports(mod: str, mods: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """The names `mod` exports grouped by the module that defines them (as reST references), and the names it
    re-exports from another documented module (documented there, so its own page must not document them again:
    a second entry under another name leaves the source page's backlinks pointing at an id no page has)."""
    import importlib

    sys.path.insert(0, str(ROOT))
    m = importlib.import_module(mod)
    names = [n for n in getattr(m, "__all__", []) if not n.startswith("_")]
    by_module: dict[str, list[str]] = {}
    elsewhere: list[str] = []
    for n in names:
        try:
            obj = getattr(m, n)
        except Exception:
            continue  # a lazily imported extra the build does not need
        home = (
            getattr(obj, "__name__", None)
            if inspect.ismodule(obj)
            else getattr(obj, "__module__", None)
        )
        if inspect.ismodule(obj) and home in mods:
            by_module.setdefault(home, []).append(f":doc:`{home}`")
        elif (inspect.isclass(obj) or inspect.isroutine(obj)) and home in mods and home != mod:
            by_module.setdefault(home, []).append(f":py:obj:`~{home}.{n}`")
            elsewhere.append(n)
        else:
            by_module.setdefault(mod, []).append(f"``{n}``")
    return by_module, elsewhere


def _exports_list(mod: str, by_module: dict[str, list[str]]) -> str:
    "reST: the exported names, each linked to the page that documents it."
    text = ""
    if by_module:
        text += f"\nNames exported by ``{mod}``\n{'-' * (len(mod) + 24)}\n\n"
        for home in sorted(by_module):
            where = "defined here" if home == mod else f"from :doc:`{home}`"
            text += f"* {where}: " + ", ".join(by_module[home]) + "\n"
    return text


def _package_page(mod: str, mods: list[str]) -> str:
    """A package's page: its own members only (the names it re-exports are documented where they are defined, and
    listed here with links), then its submodules."""
    by_module, _ = _exports(mod, mods)
    text = (
        f"{mod}\n{'=' * len(mod)}\n\n.. automodule:: {mod}\n"
        "   :members:\n   :ignore-module-all:\n   :show-inheritance:\n"
    )
    text += _exports_list(mod, by_module)
    subs = [s for s in mods if s.startswith(mod + ".") and s.count(".") == mod.count(".") + 1]
    if subs:
        text += "\nSubmodules\n----------\n\n" + "".join(f"* :doc:`{s}`\n" for s in subs)
    return text


def _module_page(mod: str, mods: list[str]) -> str:
    """A module's page: the members of its `__all__` it defines; a name it re-exports is linked to its own page."""
    by_module, elsewhere = _exports(mod, mods)
    text = (
        f"{mod}\n{'=' * len(mod)}\n\n.. automodule:: {mod}\n   :members:\n   :show-inheritance:\n"
    )
    if elsewhere:
        text += f"   :exclude-members: {', '.join(sorted(elsewhere))}\n"
        text += _exports_list(mod, {h: v for h, v in by_module.items() if h != mod})
    return text


def _summary(obj) -> str:
    "The first sentence of a docstring, as one table cell."
    doc = inspect.getdoc(obj) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return first.replace("|", "\\|")


def top_level_table(mods: list[str]) -> str:
    "Markdown: the callables, classes and constants `fairlib` exports, each linked to where it is documented."
    import importlib

    sys.path.insert(0, str(ROOT))
    fl = importlib.import_module("fairlib")
    rows, seen = [], set()
    for n in getattr(fl, "__all__", []):
        if n in seen or n.startswith("_"):
            continue
        try:
            obj = getattr(fl, n)
        except Exception:
            continue  # a lazily imported extra the build does not need
        if inspect.ismodule(obj):
            continue  # the modules are the pages listed below
        seen.add(n)
        home = getattr(obj, "__module__", None)
        if (inspect.isclass(obj) or inspect.isroutine(obj)) and home in mods:
            kind = "class" if inspect.isclass(obj) else "function"
            ref = f"{{py:obj}}`fl.{n} <{home}.{obj.__qualname__}>`"
        else:
            kind, ref = type(obj).__name__, f"`fl.{n}`"
        rows.append(
            f"| {ref} | {kind} | {_summary(obj) if kind in ('class', 'function') else ''} |"
        )
    head = "## Top-level names\n\n| name | kind | summary |\n| --- | --- | --- |\n"
    return head + "\n".join(rows) + "\n\n## Modules\n"


def write_api(mods: list[str]) -> None:
    groups: dict[str, list[str]] = {}
    for m in mods:
        parts = m.split(".")
        key = ".".join(parts[:2]) if len(parts) > 1 and (PKG / parts[1]).is_dir() else "fairlib"
        groups.setdefault(key, []).append(m)
        page = _package_page(m, mods) if _is_package(m) else _module_page(m, mods)
        write_if_changed(STAGE / "api" / f"{m}.rst", page)
    page = [
        "# API reference\n",
        "Generated from the docstrings. `import fairlib as fl` gives the names below; the paper modules "
        "(`fl.vfr`, `fl.mfarm`, `fl.agent`, ...) are imported on first use. Then one page per public module, "
        "with all its members, grouped by package.\n",
        top_level_table(mods),
    ]
    page += [
        _toctree(k, [m for m in groups[k]])
        for k in sorted(groups, key=lambda k: (k != "fairlib", k))
    ]
    write_if_changed(STAGE / "api" / "index.md", "\n".join(page))


# --- 4. sphinx-build ------------------------------------------------------------------------------------------------


def inputs_hash() -> str:
    "Hash of everything the site is built from: notebooks, docs/, this script and the package source."
    h = hashlib.sha256()
    files = [NBS / r for r in find_notebooks()]
    files += sorted(f for f in DOCS.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    files += sorted(PKG.rglob("*.py")) + [Path(__file__).resolve()]
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def is_fresh() -> bool:
    stamp = SITE / STAMP
    return (
        stamp.is_file()
        and (SITE / "index.html").is_file()
        and stamp.read_text().strip() == inputs_hash()
    )


def sphinx_build(jobs: str) -> None:
    if HTML.exists():
        shutil.rmtree(HTML)
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-c",
        str(DOCS),
        "-d",
        str(DOCTREES),
        "-E",
        "-q",
        "-W",
        "--keep-going",
        "-j",
        jobs,
        str(STAGE),
        str(HTML),
    ]
    env = {**os.environ, "MPLBACKEND": "Agg", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    p = subprocess.run(cmd, cwd=ROOT, env=env)
    if p.returncode:
        raise SystemExit(
            f"build_docs: sphinx-build failed (exit {p.returncode}); warnings are errors (-W), see above"
        )


def publish(digest: str) -> None:
    tmp = ROOT / "_site.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(HTML, tmp, ignore=shutil.ignore_patterns(".buildinfo", ".doctrees"))
    (tmp / STAMP).write_text(digest + "\n")
    if SITE.exists():
        shutil.rmtree(SITE)
    tmp.rename(SITE)


def build(if_stale: bool = False, jobs: str = "auto") -> Path:
    t0 = time.perf_counter()
    digest = inputs_hash()
    if if_stale and is_fresh():
        log(f"{SITE.relative_to(ROOT)}/ is up to date")
        return SITE
    notebooks = find_notebooks()
    if not notebooks:
        raise SystemExit("build_docs: no notebooks under nbs/")
    library, papers = stage(notebooks)
    write_tocs(library, papers)
    unlisted = add_unlisted_pages()
    if unlisted:
        log(f"docs pages no toctree listed, added to the landing page's: {', '.join(unlisted)}")
    write_cli_page()
    mods = public_modules()
    check_imports(mods)
    write_api(mods)
    log(
        f"staged {len(notebooks)} notebooks ({sum(map(len, library.values()))} library in {len(library)} groups, "
        f"{sum(map(len, papers.values()))} paper in {len(papers)} papers) and {len(mods)} API pages "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    t1 = time.perf_counter()
    sphinx_build(jobs)
    log(f"sphinx-build {time.perf_counter() - t1:.1f} s")
    publish(digest)
    log(f"site at {SITE.relative_to(ROOT)}/index.html ({time.perf_counter() - t0:.1f} s in all)")
    return SITE


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--if-stale",
        action="store_true",
        help="skip the build when _site/ holds a build of the same inputs",
    )
    ap.add_argument(
        "-j", "--jobs", default="auto", help="sphinx-build parallel jobs (default auto)"
    )
    a = ap.parse_args(argv)
    build(if_stale=a.if_stale, jobs=a.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
