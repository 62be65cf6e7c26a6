"""The reproduction runner: planning, clear failures naming the notebook and cell, registry hygiene."""
from pathlib import Path

import nbformat
import pytest
import yaml

from fairlib import cli
from fairlib.config import repo_root
from fairlib.core import FairlibInputError


def test_every_registered_notebook_exists_and_has_parameters_cell():
    reg = cli.load_registry()
    assert reg, "registry is empty"
    for paper, nbs in reg.items():
        for nb in nbs:
            path = repo_root() / nb
            assert path.exists(), nb
            node = nbformat.read(path, as_version=4)
            tagged = [c for c in node.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
            assert len(tagged) == 1, f"{nb} needs exactly one cell tagged 'parameters'"
            for name in ("profile", "fig_dir", "work_dir"):
                assert f"{name} =" in tagged[0].source, f"{nb}: parameters cell must define {name}"


def test_every_profile_covers_every_registered_notebook():
    reg = cli.load_registry()
    for profile in ("quick", "smoke", "full"):
        prof = cli.load_profile(profile)
        for paper, nbs in reg.items():
            for nb in nbs:
                assert f"{paper}/{Path(nb).stem}" in prof, f"params/{profile}.yaml lacks {paper}/{Path(nb).stem}"


def test_smoke_profile_never_writes_into_figures():
    for job in cli.plan_run("smoke"):
        assert "runs/smoke" in job["params"]["fig_dir"] and "runs/smoke" in str(job["output"])


def test_unknown_paper_and_profile_are_clear_errors():
    with pytest.raises(FairlibInputError, match="unknown paper 'nope'"):
        cli.plan_run("quick", "nope")
    with pytest.raises(FairlibInputError, match="no parameter file"):
        cli.plan_run("no-such-profile")


def _registry(tmp_path, cells):
    nbdir = tmp_path / "nbs"; nbdir.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.cells[0].metadata["tags"] = ["parameters"]
    src = nbdir / "demo.ipynb"; nbformat.write(nb, src)
    reg = tmp_path / "papers.yaml"; reg.write_text(yaml.safe_dump({"demo": [str(src)]}))
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump({"demo/demo": {"x": 3}}))
    return reg


def test_failure_names_notebook_and_cell(tmp_path, capsys):
    reg = _registry(tmp_path, ["x = 1\nprofile = fig_dir = work_dir = None", "y = x + 1", "raise RuntimeError('boom ' + str(x))"])
    with pytest.raises(cli.NotebookFailed) as e:
        cli.reproduce("smoke", registry=reg, params_dir=tmp_path, progress=False)
    err = e.value
    assert err.ename == "RuntimeError" and "boom 3" in err.evalue  # the profile's x=3 was injected
    assert err.cell_index == 2 and err.exec_count == 4  # source index; papermill injects a parameters cell
    assert "demo.ipynb" in str(err) and "failed in cell 2" in str(err) and "raise RuntimeError" in str(err)
    assert Path(err.output).exists()


def test_main_returns_nonzero_with_message(capsys, monkeypatch):
    assert cli.main(["reproduce", "--profile", "quick", "--paper", "nope"]) == 1
    assert "unknown paper 'nope'" in capsys.readouterr().err


def test_single_paper_run_keeps_other_papers_in_index(tmp_path):
    nbdir = tmp_path / "nbs"; nbdir.mkdir()
    reg = {}
    for key in ("demo_a", "demo_b"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("profile = fig_dir = work_dir = None")])
        nb.cells[0].metadata["tags"] = ["parameters"]
        src = nbdir / f"{key}.ipynb"; nbformat.write(nb, src); reg[key] = [str(src)]
    (tmp_path / "papers.yaml").write_text(yaml.safe_dump(reg))
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump({"demo_a/demo_a": {}, "demo_b/demo_b": {}}))
    cli.reproduce("smoke", "demo_a", registry=tmp_path / "papers.yaml", params_dir=tmp_path, progress=False)
    done = cli.reproduce("smoke", "demo_b", registry=tmp_path / "papers.yaml", params_dir=tmp_path, progress=False)
    index = (done[0]["output"].parent.parent / "index.html").read_text()
    assert "demo_a.html" in index and "demo_b.html" in index
