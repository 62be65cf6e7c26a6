"""The notebook-rhythm measure (tools/notebook_rhythm.py) on a notebook whose numbers are known by construction."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "notebook_rhythm", ROOT / "tools" / "notebook_rhythm.py"
)
nr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nr)


def _nb(tmp_path, cells):
    p = tmp_path / "x.ipynb"
    nb = {"cells": [{"cell_type": t, "source": s, "metadata": {}} for t, s in cells], "nbformat": 4}
    p.write_text(json.dumps(nb))
    return p


def test_measure_counts_code_without_docstrings_and_directives(tmp_path):
    f = '#| export\ndef f(x):\n    """One line.\n\n    More.\n    """\n    return x\n'  # 2 lines of code
    g = "#| export\n" + "\n".join(f"a{i} = {i}" for i in range(10)) + "\n"  # 10 lines of code
    long_ = "x = '" + "y" * 120 + "'"
    p = _nb(tmp_path, [("code", f), ("markdown", "why"), ("code", g), ("code", g), ("code", long_)])
    m = nr.measure([p])
    assert m["export_cells"] == 3
    assert m["median"] == 10 and m["max"] == 10
    assert m["median_with_docstrings"] == 10  # 6 lines for f with its docstring, 10 for each g
    # f is followed by markdown, the first g by an exported cell, the second g by an example
    assert abs(m["followed"] - 2 / 3) < 1e-12
    code_lines = 7 + 11 + 11 + 1
    assert abs(m["long_lines"] - 1 / code_lines) < 1e-12


def test_check_fails_when_worse_than_the_ceiling():
    m = {"median": 99, "p90": 1, "followed": 1.0, "long_lines": 0.0}
    bad = nr.regressions(m)
    assert bad and all("median" in b for b in bad)
    assert "median" in nr.failures(m) and "followed" not in nr.failures(m)


def test_the_repository_is_not_worse_than_recorded():
    m = nr.measure(list(nr.notebooks()))
    assert nr.regressions(m) == []
    assert [k for k in nr.failures(m) if k not in nr.CEILING] == []
