"""The reproduction runner: planning, clear failures naming the notebook and cell, registry hygiene."""

from pathlib import Path

import nbformat
import pytest
import yaml

from fairlib import cli
from fairlib.runner import writeback
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
            tagged = [
                c for c in node.cells if "parameters" in c.get("metadata", {}).get("tags", [])
            ]
            assert len(tagged) == 1, f"{nb} needs exactly one cell tagged 'parameters'"
            for name in ("profile", "fig_dir", "work_dir"):
                assert f"{name} =" in tagged[0].source, f"{nb}: parameters cell must define {name}"


def test_every_profile_covers_every_registered_notebook():
    reg = cli.load_registry()
    for profile in ("quick", "smoke", "full"):
        prof = cli.load_profile(profile)
        for paper, nbs in reg.items():
            for nb in nbs:
                assert f"{paper}/{Path(nb).stem}" in prof, (
                    f"params/{profile}.yaml lacks {paper}/{Path(nb).stem}"
                )


def test_quick_mfarm_profile_keeps_the_papers_scale():
    """The quick profile runs the context experiment on all three tiers of both tasks, every scored slice at
    the authors' protocol (80 balanced cases: n_cases None), and its other experiments on slices it scores."""
    prof = cli.load_profile("quick")
    inf = prof["mfarm/02_inference"]
    assert inf["protocol"] == "paper" and inf["n_cases"] is None
    # every tier of both tasks (Table 7 / Figure 13 need all six slices)
    assert {t: sorted(v) for t, v in inf["slices"].items()} == {
        "ed_triage": ["high", "low", "medium"],
        "opioid": ["high", "low", "medium"],
    }
    assert sorted(cli.load_profile("full")["mfarm/02_inference"]["slices"]["opioid"]) == [
        "high",
        "low",
        "medium",
    ]
    scored = {(t, tier) for t, tiers in inf["slices"].items() for tier in tiers}
    for key in ("mfarm/05_precision", "mfarm/06_finetune", "mfarm/07_reliability"):
        assert prof[key]["protocol"] == "paper" and prof[key]["n_cases"] is None, key
    assert tuple(inf["wording_slice"]) in scored
    assert {
        (t, tier) for t, tiers in prof["mfarm/05_precision"]["slices"].items() for tier in tiers
    } <= scored
    assert {
        (t, tier) for t, tiers in prof["mfarm/06_finetune"]["eval_tiers"].items() for tier in tiers
    } <= scored
    assert {tuple(s) for s in prof["mfarm/07_reliability"]["reliability_slices"]} <= scored
    assert tuple(prof["mfarm/07_reliability"]["floor_slice"]) in scored


def test_smoke_profile_never_writes_into_figures():
    for job in cli.plan_run("smoke"):
        assert "runs/smoke" in job["params"]["fig_dir"] and "runs/smoke" in str(job["output"])


def test_unknown_paper_and_profile_are_clear_errors():
    with pytest.raises(FairlibInputError, match="unknown paper 'nope'"):
        cli.plan_run("quick", "nope")
    with pytest.raises(FairlibInputError, match="no parameter file"):
        cli.plan_run("no-such-profile")


def _registry(tmp_path, cells):
    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.cells[0].metadata["tags"] = ["parameters"]
    src = nbdir / "demo.ipynb"
    nbformat.write(nb, src)
    reg = tmp_path / "papers.yaml"
    reg.write_text(yaml.safe_dump({"demo": [str(src)]}))
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump({"demo/demo": {"x": 3}}))
    return reg


def test_failure_names_notebook_and_cell(tmp_path, capsys):
    reg = _registry(
        tmp_path,
        [
            "x = 1\nprofile = fig_dir = work_dir = None",
            "y = x + 1",
            "raise RuntimeError('boom ' + str(x))",
        ],
    )
    with pytest.raises(cli.NotebookFailed) as e:
        cli.reproduce(
            "smoke", registry=reg, params_dir=tmp_path, runs_dir=tmp_path / "runs", progress=False
        )
    err = e.value
    assert err.ename == "RuntimeError" and "boom 3" in err.evalue  # the profile's x=3 was injected
    assert (
        err.cell_index == 2 and err.exec_count == 4
    )  # source index; papermill injects a parameters cell
    assert (
        "demo.ipynb" in str(err)
        and "failed in cell 2" in str(err)
        and "raise RuntimeError" in str(err)
    )
    assert Path(err.output).exists()


def test_main_returns_nonzero_with_message(capsys, monkeypatch):
    assert cli.main(["reproduce", "--profile", "quick", "--paper", "nope"]) == 1
    assert "unknown paper 'nope'" in capsys.readouterr().err


def test_single_paper_run_keeps_other_papers_in_index(tmp_path):
    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    reg = {}
    for key in ("demo_a", "demo_b"):
        nb = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell("profile = fig_dir = work_dir = None")]
        )
        nb.cells[0].metadata["tags"] = ["parameters"]
        src = nbdir / f"{key}.ipynb"
        nbformat.write(nb, src)
        reg[key] = [str(src)]
    (tmp_path / "papers.yaml").write_text(yaml.safe_dump(reg))
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump({"demo_a/demo_a": {}, "demo_b/demo_b": {}}))
    kw = dict(
        registry=tmp_path / "papers.yaml",
        params_dir=tmp_path,
        runs_dir=tmp_path / "runs",
        progress=False,
    )
    cli.reproduce("smoke", "demo_a", **kw)
    done = cli.reproduce("smoke", "demo_b", **kw)
    index = (done[0]["output"].parent.parent / "index.html").read_text()
    assert "demo_a.html" in index and "demo_b.html" in index


# --- staging, swap, resume, interruption, the index as a report (issue 9 §2, issue 8 §4) ---------------------------
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd

_NB1 = [
    "profile = fig_dir = work_dir = None\nv = 0",
    "from pathlib import Path\nimport pandas as pd\nfrom fairlib.report import save_table\n"
    "Path(work_dir).mkdir(parents=True, exist_ok=True)\n"
    "with open(Path(work_dir) / 'nb1_runs.txt', 'a') as f: f.write('run\\n')\n"
    "save_table(pd.DataFrame({'quantity': ['x'], 'ours': [v], 'published': [1]}), 'table_vs_paper', fig_dir=fig_dir,\n"
    "           caption='Ours vs paper', source='SYNTHETIC test twin')",
]
_NB2 = [
    "profile = fig_dir = work_dir = None\nsleep = 0\nfail = False",
    "import time\nfrom pathlib import Path\nimport pandas as pd\nimport matplotlib\nmatplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\nfrom fairlib.report import save_table, save_figure\n"
    "Path(work_dir, 'nb2_started').write_text('1')\ntime.sleep(sleep)\n"
    "assert not fail, 'asked to fail'\n"
    "save_table(pd.DataFrame({'a': [1.5]}), 'other', fig_dir=fig_dir, source='SYNTHETIC test twin')\n"
    "fig, ax = plt.subplots(); ax.plot([0, 1]); save_figure(fig, 'figure_line', fig_dir=fig_dir)",
]


def _two_notebook_registry(tmp_path, registry_form="list"):
    nbdir = tmp_path / "nbs"
    nbdir.mkdir(exist_ok=True)
    paths = []
    for name, cells in (("n1", _NB1), ("n2", _NB2)):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        nb.cells[0].metadata["tags"] = ["parameters"]
        nbformat.write(nb, nbdir / f"{name}.ipynb")
        paths.append(str(nbdir / f"{name}.ipynb"))
    entry = (
        paths
        if registry_form == "list"
        else {"notebooks": paths, "headline": ["table_vs_paper"], "title": "Demo paper"}
    )
    (tmp_path / "papers.yaml").write_text(yaml.safe_dump({"demo": entry}))
    return tmp_path / "papers.yaml"


def _profile(tmp_path, **n2):
    (tmp_path / "smoke.yaml").write_text(
        yaml.safe_dump({"demo/n1": {"v": n2.pop("v", 1)}, "demo/n2": n2})
    )


def test_failed_run_keeps_previous_figures_and_marks_the_index(tmp_path):
    reg = _two_notebook_registry(tmp_path)
    runs = tmp_path / "runs"
    _profile(tmp_path, v=1)
    cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    fig = runs / "figures" / "demo"
    assert pd.read_csv(fig / "table_vs_paper.csv")["ours"].tolist() == [1]
    _profile(tmp_path, v=2, fail=True)
    with pytest.raises(cli.NotebookFailed, match="asked to fail"):
        cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    # n1 succeeded with v=2 but the paper did not: the previous figures stay, the index says so
    assert pd.read_csv(fig / "table_vs_paper.csv")["ours"].tolist() == [1]
    assert (fig / "figure_line.png").exists()
    index = (runs / "index.html").read_text()
    assert "failed in demo/n2" in index and "previous complete run" in index
    assert (
        runs / "staging" / "demo" / "figures" / "table_vs_paper.csv"
    ).exists()  # the attempt is kept for reading


def _wait_for(path, timeout):
    t0 = time.time()
    while not path.exists():
        if time.time() - t0 > timeout:
            return False
        time.sleep(0.2)
    return True


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resume_skips_finished_notebooks(tmp_path):
    """A real interrupted run: SIGINT to the runner's process group (what Ctrl-C in a terminal does)."""
    reg = _two_notebook_registry(tmp_path)
    runs = tmp_path / "runs"
    work = runs / "work" / "demo"
    args = [
        sys.executable,
        "-m",
        "fairlib.cli",
        "reproduce",
        "--profile",
        "smoke",
        "--no-progress",
        "--registry",
        str(reg),
        "--params-dir",
        str(tmp_path),
        "--runs-dir",
        str(runs),
    ]
    _profile(tmp_path, v=1)
    assert subprocess.run(args, capture_output=True, text=True, timeout=300).returncode == 0
    fig = runs / "figures" / "demo"
    index_before = (runs / "index.html").read_text()
    (work / "nb2_started").unlink()

    _profile(tmp_path, v=2, sleep=120)
    # a terminal's Ctrl-C: the runner starts with SIGINT at its default disposition (a job started in the background
    # by a non-interactive shell, as CI scripts often are, inherits SIGINT ignored, and then nothing could interrupt it)
    p = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert _wait_for(work / "nb2_started", 240), "second notebook never started"
        time.sleep(1.0)
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130, (p.returncode, err[-2000:])
    last = [l for l in err.strip().splitlines() if l.strip()][-1]
    assert last.startswith("fairlib reproduce: interrupted during demo/n2") and "resume" in last, (
        err[-2000:]
    )
    # no traceback from the runner itself. The kernel is a separate process: nbclient interrupts it, and it may
    # log "KeyboardInterrupt caught in kernel" and a socket error of its own; those lines are not the runner's.
    assert "fairlib/cli.py" not in err, err[-2000:]
    assert not any(
        l.strip() == "KeyboardInterrupt" or l.startswith("KeyboardInterrupt:")
        for l in err.splitlines()
    ), err[-2000:]
    # previous figures intact, index still describes them
    assert pd.read_csv(fig / "table_vs_paper.csv")["ours"].tolist() == [1]
    assert "interrupted in demo/n2" in (runs / "index.html").read_text()
    assert "table_vs_paper" in index_before
    state = json.loads((runs / "run_state.json").read_text())
    assert list(state["done"]) == ["demo/n1"]
    assert (work / "nb1_runs.txt").read_text().count("run") == 2

    # resume: n1 unchanged (same notebook, parameters, code, settings) is kept, n2 runs, then the swap
    _profile(tmp_path, v=2, sleep=0)
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "demo/n1: unchanged since the interrupted run, kept (resume)" in r.stdout
    assert (work / "nb1_runs.txt").read_text().count("run") == 2  # not executed again
    assert pd.read_csv(fig / "table_vs_paper.csv")["ours"].tolist() == [2]
    assert not (runs / "run_state.json").exists() and not (runs / "staging" / "demo").exists()
    assert "interrupted" not in (runs / "index.html").read_text()


def test_resume_reruns_a_notebook_whose_parameters_changed(tmp_path):
    reg = _two_notebook_registry(tmp_path)
    runs = tmp_path / "runs"
    _profile(tmp_path, v=1, fail=True)
    with pytest.raises(cli.NotebookFailed):
        cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    _profile(tmp_path, v=3)  # n1's parameters changed: its key changed, it runs again
    cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    assert (runs / "work" / "demo" / "nb1_runs.txt").read_text().count("run") == 2
    assert pd.read_csv(runs / "figures" / "demo" / "table_vs_paper.csv")["ours"].tolist() == [3]
    _profile(tmp_path, v=3, fail=True)
    with pytest.raises(cli.NotebookFailed):
        cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    _profile(tmp_path, v=3)  # same n1 key as in the failed run: kept; --no-resume would redo it
    cli.reproduce(
        "smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False, resume=False
    )
    assert (runs / "work" / "demo" / "nb1_runs.txt").read_text().count("run") == 4


def test_index_is_a_browsable_report(tmp_path):
    reg = _two_notebook_registry(tmp_path, registry_form="mapping")
    runs = tmp_path / "runs"
    _profile(tmp_path, v=7)
    assert cli.load_registry(reg) == {
        "demo": [str(tmp_path / "nbs" / "n1.ipynb"), str(tmp_path / "nbs" / "n2.ipynb")]
    }
    cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    index = (runs / "index.html").read_text()
    assert "Demo paper" in index and "Synthetic data" in index
    assert (
        index.index("Headline numbers") < index.index("Ours vs paper") < index.index("All tables")
    )
    assert "<table" in index and "<td>7</td>" in index  # inline, not a link to Markdown
    assert "img{width:100%" in index and "src='figures/demo/figure_line.png'" in index
    assert "href='demo/n1.html'" in index and "href='demo/n1.ipynb'" in index
    assert str(tmp_path) not in index  # every link relative
    # copied elsewhere, every relative link still resolves
    import re, shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs, copy)
    for link in re.findall(r"(?:href|src)='([^'#]+)'", (copy / "index.html").read_text()):
        assert (copy / link).exists(), link


@pytest.mark.parametrize(
    "text, needle",
    [
        ("demo: [a.ipynb\n", "line"),
        ("- a.ipynb\n", "must map paper keys"),
        ("demo: 3\n", "must list notebook paths"),
        ("demo: {notebooks: [a.ipynb], headlines: [x]}\n", "unknown key(s) ['headlines']"),
    ],
    ids=["syntax", "not-a-mapping", "not-a-list", "misspelt-key"],
)
def test_malformed_registry_is_a_clear_error(tmp_path, text, needle):
    (tmp_path / "papers.yaml").write_text(text)
    with pytest.raises(FairlibInputError, match="papers.yaml") as e:
        cli.load_registry(tmp_path / "papers.yaml")
    assert needle in str(e.value)


def test_registered_headline_tables_exist_in_the_rendered_figures():
    for paper, meta in cli.load_paper_meta().items():
        for name in meta["headline"]:
            assert (repo_root() / "figures" / paper / f"{name}.csv").exists(), (
                f"{paper}: headline table {name} is not rendered"
            )


def test_keyboard_interrupt_inside_the_kernel_is_a_clean_interruption(tmp_path):
    """Ctrl-C reaching the kernel (the cell raises KeyboardInterrupt) is reported like one reaching the runner."""
    reg = _registry(
        tmp_path, ["profile = fig_dir = work_dir = None\nx = 0", "raise KeyboardInterrupt"]
    )
    runs = tmp_path / "runs"
    with pytest.raises(cli.RunInterrupted, match="interrupted during demo/demo; 0 of 1 notebook"):
        cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    assert (runs / "run_state.json").exists()
    rc = cli.main(
        [
            "reproduce",
            "--profile",
            "smoke",
            "--no-progress",
            "--registry",
            str(reg),
            "--params-dir",
            str(tmp_path),
            "--runs-dir",
            str(runs),
        ]
    )
    assert rc == 130


def test_corrupt_run_state_is_named_and_the_run_starts_afresh(tmp_path, capsys):
    reg = _two_notebook_registry(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    _profile(tmp_path, v=5)
    (runs / "run_state.json").write_text('{"done": {"demo/n1": {"key": ')  # truncated by a kill
    cli.reproduce("smoke", registry=reg, params_dir=tmp_path, runs_dir=runs, progress=False)
    assert "run_state.json is unreadable" in capsys.readouterr().out
    assert pd.read_csv(runs / "figures" / "demo" / "table_vs_paper.csv")["ours"].tolist() == [5]


# --- the executed notebooks written back into nbs/papers (issue: read every paper notebook with its outputs) ----------
_WB_CELLS = [
    "profile = fig_dir = work_dir = None\nx = 1\nedit = None",
    "# A paper notebook\nText between the code cells.",
    "print('x is', x)\nprint('done')",
    "import sys\nprint('a warning', file=sys.stderr)\nfrom tqdm.auto import tqdm\nfor _ in tqdm(range(3)): pass\nx * 2",
    "class Thing: pass\nThing()",
    "print(fig_dir)",
    "import json\nfrom pathlib import Path\n"
    "if edit:   # an author editing the source notebook while it runs\n"
    "    nb = json.loads(Path(edit).read_text()); nb['cells'][1]['source'] = ['# Edited during the run\\n']\n"
    "    Path(edit).write_text(json.dumps(nb, indent=1))",
]


def _wb_registry(tmp_path, **params):
    nbdir = tmp_path / "nbs"
    nbdir.mkdir(exist_ok=True)
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(c) if c.startswith("#") else nbformat.v4.new_code_cell(c)
            for c in _WB_CELLS
        ]
    )
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.metadata["jupytext"] = {"main_language": "python"}
    src = nbdir / "demo.ipynb"
    nbformat.write(nb, src)
    (tmp_path / "papers.yaml").write_text(yaml.safe_dump({"demo": [str(src)]}))
    for profile in ("quick", "smoke"):
        (tmp_path / f"{profile}.yaml").write_text(yaml.safe_dump({"demo/demo": dict(params, x=3)}))
    kw = dict(
        registry=tmp_path / "papers.yaml",
        params_dir=tmp_path,
        runs_dir=tmp_path / "runs",
        progress=False,
    )
    return src, kw


def _nbdev_clean_cli(path):
    "Run the real `nbdev-clean` on one notebook, with this project's [tool.nbdev] settings (cwd = repo root)."
    pytest.importorskip("nbdev")
    exe = Path(sys.executable).with_name("nbdev-clean")
    subprocess.run(
        [str(exe), "--fname", str(path)],
        cwd=repo_root(),
        check=True,
        capture_output=True,
        timeout=120,
    )


def test_write_back_fills_the_source_notebook_as_nbdev_clean_leaves_it(tmp_path, capsys):
    src, kw = _wb_registry(tmp_path)
    before = nbformat.read(src, as_version=4)
    cli.reproduce("quick", **kw)
    assert "demo: outputs written back into 1 source notebook(s)" in capsys.readouterr().out
    text = src.read_text(encoding="utf-8")
    nb = json.loads(text)
    # same cells and sources as the source notebook; no injected-parameters cell
    assert writeback._author_cells(nb) == writeback._author_cells(before) and len(
        nb["cells"]
    ) == len(before.cells)
    assert [c["id"] for c in nb["cells"]] == [c["id"] for c in before.cells]
    assert "injected-parameters" not in text and nb["cells"][0]["metadata"] == {
        "tags": ["parameters"]
    }
    # outputs from the run (x = 3 injected by the profile), volatile parts stripped
    outs = [c.get("outputs") for c in nb["cells"]]
    assert outs[2] == [{"name": "stdout", "output_type": "stream", "text": ["x is 3\n", "done\n"]}]
    assert outs[3] == [
        {
            "data": {"text/plain": ["6"]},
            "execution_count": None,
            "metadata": {},
            "output_type": "execute_result",
        }
    ]
    assert outs[4][0]["data"]["text/plain"] == ["<__main__.Thing>"]  # no ' at 0x...'
    assert outs[5][0]["text"] == [
        str(tmp_path / "runs" / "figures" / "demo") + "\n"
    ]  # the final folder, not staging
    ran = (
        kw["runs_dir"] / "demo" / "demo.ipynb"
    ).read_text()  # the executed copy has the noise the write-back strips
    assert all(
        n in ran
        for n in (
            '"name": "stderr"',
            "application/vnd.jupyter.widget-view+json",
            "papermill",
            "injected-parameters",
            "staging",
            " at 0x",
        )
    )
    for bad in (
        '"name": "stderr"',
        "widget",
        "papermill",
        "language_info",
        "kernelspec",
        "iopub",
        'execution"',
        "staging",
        " at 0x",
    ):
        assert bad not in text, bad
    assert nb["metadata"] == {"jupytext": {"main_language": "python"}}
    assert all(c.get("execution_count") is None for c in nb["cells"])
    # exactly nbdev-clean's format: its clean_nb + writer, and the real command, change nothing
    pytest.importorskip("nbdev")
    from fastcore.nbio import nb2str
    from nbdev.clean import clean_nb

    again = json.loads(text)
    clean_nb(again, allowed_metadata_keys=["jupytext"], allowed_cell_metadata_keys=["tags"])
    assert nb2str(again) == text
    _nbdev_clean_cli(src)
    assert src.read_text(encoding="utf-8") == text
    # a second run (papermill runs a notebook that carries outputs) leaves the file byte-identical and untouched
    mtime = src.stat().st_mtime_ns
    cli.reproduce("quick", **kw)
    assert src.read_text(encoding="utf-8") == text and src.stat().st_mtime_ns == mtime
    assert "already up to date" in capsys.readouterr().out


def test_no_write_back_and_the_smoke_profile_leave_the_source_untouched(tmp_path):
    src, kw = _wb_registry(tmp_path)
    before = src.read_bytes()
    cli.reproduce("smoke", **kw)  # what `make test` runs
    assert src.read_bytes() == before
    cli.reproduce("quick", write_back=False, **kw)
    assert src.read_bytes() == before
    args = [
        "reproduce",
        "--profile",
        "quick",
        "--no-progress",
        "--no-write-back",
        "--registry",
        str(kw["registry"]),
        "--params-dir",
        str(tmp_path),
        "--runs-dir",
        str(kw["runs_dir"]),
    ]
    assert cli.main(args) == 0 and src.read_bytes() == before
    assert any(
        c.get("outputs")
        for c in nbformat.read(kw["runs_dir"] / "demo" / "demo.ipynb", as_version=4).cells
    )


def test_a_source_edited_during_the_run_is_not_overwritten(tmp_path, capsys):
    src, kw = _wb_registry(tmp_path, edit=None)
    (tmp_path / "quick.yaml").write_text(yaml.safe_dump({"demo/demo": {"x": 3, "edit": str(src)}}))
    cli.reproduce("quick", **kw)
    edited = src.read_text()
    assert (
        "Edited during the run" in edited and '"outputs": []' in edited and "x is 3" not in edited
    )
    out = capsys.readouterr().out
    assert "demo.ipynb: outputs not written back: it was edited during the run" in out
    assert len([l for l in out.splitlines() if "not written back" in l]) == 1


def test_outputs_from_real_data_are_not_written_back(tmp_path, capsys):
    src, kw = _wb_registry(tmp_path)
    nb = nbformat.read(src, as_version=4)
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "import pandas as pd\nfrom fairlib.report import save_table\n"
            "save_table(pd.DataFrame({'group': ['a', 'b'], 'rate': [0.5, 0.25]}), 'rates', fig_dir=fig_dir, "
            "count_columns=[],\n"
            "           source='REAL Texas-100X (test.csv)')"
        )
    )
    nbformat.write(nb, src)
    before = src.read_bytes()
    cli.reproduce("quick", **kw)
    assert src.read_bytes() == before
    out = capsys.readouterr().out
    assert (
        "demo: outputs not written back into nbs/: table rates names a real data source" in out
        and "small-cell rule" in out
    )


def test_resume_keys_ignore_the_outputs_the_write_back_adds(tmp_path):
    src, kw = _wb_registry(tmp_path)
    jobs = cli.plan_run(
        "quick", registry=kw["registry"], params_dir=tmp_path, runs_dir=kw["runs_dir"]
    )
    key = cli.job_keys(jobs)
    nb = nbformat.read(src, as_version=4)
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x is 3\n")]
    nb.cells[2].execution_count = 2
    nbformat.write(nb, src)
    assert cli.job_keys(jobs) == key
    nb.cells[2].source += "\nprint('more')"
    nbformat.write(nb, src)
    assert cli.job_keys(jobs) != key
