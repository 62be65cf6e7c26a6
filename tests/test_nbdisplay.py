"""Figures and tables as a paper notebook shows them, in a real Jupyter kernel (nbclient, as papermill runs them).

The oracle is the executed notebook itself: every figure that `fairlib.report.save_figure` writes appears exactly
once as an image/png output whose bytes are the PNG file; a figure left as a cell's last expression or followed by
`plt.show()` adds no `<Figure size ...>` text and no second image; the returned path prints no `PosixPath(...)`;
and a DataFrame shows its floats at the precision the paper prints. Both backends a paper notebook meets are run:
pyplot's inline backend (a kernel's default) and Agg (what the VFR notebooks select).
"""

from __future__ import annotations
import base64, struct

import nbformat
import pytest
from nbclient import NotebookClient

from fairlib.nbdisplay import (
    display_frame,
    format_float,
    kernel_shell,
    notebook_display,
    show_figure,
)

pytestmark = pytest.mark.xdist_group("kernel")

CELLS = [
    """{backend}
import matplotlib.pyplot as plt
import numpy as np, pandas as pd
from matplotlib.figure import Figure
from matplotlib.backends.backend_agg import FigureCanvasAgg
from fairlib.report import paper_dirs, save_figure
fig_dir, work_dir = paper_dirs("vfr", {fig_dir!r}, {work_dir!r})""",
    # a pyplot figure, saved, then the cell's last expression
    """fig, ax = plt.subplots(figsize=(3, 2)); ax.plot([0, 1], [1, 0])
save_figure(fig, "pyplot_fig", fig_dir=fig_dir)
fig""",
    # a pyplot-free figure (fairlib.plots' kind), saved, then plt.show()
    """g = Figure(figsize=(2, 2)); FigureCanvasAgg(g); g.add_subplot().bar([0, 1], [2, 3])
save_figure(g, "plain_fig", fig_dir=fig_dir)
plt.show()""",
    # a figure that was never saved, left as the last expression
    """h = Figure(figsize=(2, 1)); FigureCanvasAgg(h); h.add_subplot().plot([1, 2, 3])
h""",
    # a figure saved as the cell's last expression (save_figure returns the path: no PosixPath(...) text)
    """k = Figure(figsize=(2, 1)); FigureCanvasAgg(k); k.add_subplot().plot([3, 1, 2])
save_figure(k, "last_expression_fig", fig_dir=fig_dir)""",
    # a table: a float column and a claims-style column of numbers held as text
    """pd.DataFrame({"rate": [0.49795918367346936, 0.000041], "fairlib": ["0.8528138528138528", "text"],
              "n": [336.0, np.nan]})""",
]


def _png_width(b64: str) -> int:
    data = base64.b64decode(b64)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])[0]


@pytest.fixture(
    scope="module", params=["%matplotlib inline", "import matplotlib; matplotlib.use('Agg')"]
)
def executed(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nbdisplay")
    fig_dir, work_dir = tmp / "figures", tmp / "work"
    src = [
        CELLS[0].format(backend=request.param, fig_dir=str(fig_dir), work_dir=str(work_dir)),
        *CELLS[1:],
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in src])
    NotebookClient(
        nb, kernel_name="python3", timeout=180, resources={"metadata": {"path": str(tmp)}}
    ).execute()
    return nb, fig_dir


def _images(cell) -> list[str]:
    return [o["data"]["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]


def _texts(cell) -> str:
    return "".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs
    )


def test_each_saved_figure_is_shown_once_as_its_png(executed):
    nb, fig_dir = executed
    for i, name in ((1, "pyplot_fig"), (2, "plain_fig"), (4, "last_expression_fig")):
        imgs = _images(nb.cells[i])
        assert len(imgs) == 1, (name, [o.get("output_type") for o in nb.cells[i].outputs])
        assert base64.b64decode(imgs[0]) == (fig_dir / f"{name}.png").read_bytes()
        assert _png_width(imgs[0]) > 0


def test_no_figure_placeholder_anywhere(executed):
    nb, _ = executed
    for cell in nb.cells:
        assert "<Figure size" not in _texts(cell) and "PosixPath(" not in _texts(cell), cell.source
        assert not [o for o in cell.outputs if o.get("output_type") == "error"], cell.outputs


def test_an_unsaved_figure_is_shown_as_a_png(executed):
    nb, _ = executed
    imgs = _images(nb.cells[3])
    assert len(imgs) == 1 and _png_width(imgs[0]) > 0


def test_a_table_shows_floats_at_the_papers_precision(executed):
    nb, _ = executed
    html = "".join(o["data"].get("text/html", "") for o in nb.cells[5].outputs if "data" in o)
    assert "<table" in html
    for shown in ("0.498", "4.1e-05", "0.853", "336", "text"):
        assert f"<td>{shown}</td>" in html, (shown, html)
    for hidden in ("0.497959", "0.8528138528138528", "336.0"):
        assert hidden not in html, hidden


def test_outside_a_kernel_nothing_is_shown_or_set(tmp_path):
    from matplotlib.figure import Figure

    assert kernel_shell() is None
    assert notebook_display(3) is False
    missing = tmp_path / "never-written.png"
    assert show_figure(Figure(), missing) == missing  # not read: nothing to show it in


@pytest.mark.parametrize(
    "x, precision, text",
    [
        (0.49795918367346936, 3, "0.498"),
        (0.0004491, 3, "0.000449"),
        (-2.5e-07, 2, "-2.5e-07"),
        (12.0, 0, "12"),
        (0.0, 3, "0.000"),
        (float("nan"), 3, "NaN"),
        (float("-inf"), 3, "-inf"),
    ],
)
def test_format_float_against_python_formatting(x, precision, text):
    assert format_float(x, precision) == text
    if x == x and abs(x) != float("inf") and round(abs(x), precision) != 0:
        assert float(format_float(x, precision)) == float(f"{x:.{precision}f}")


def test_display_frame_keeps_the_published_precision_of_each_row():
    import pandas as pd

    claims = pd.DataFrame(
        {
            "published": ["0.0851", "4.60", "18"],
            "fairlib": ["0.08509999999999995", "4.600000000000004", "19.0"],
        }
    )
    shown, fmts = display_frame(claims)
    assert list(shown["fairlib"]) == ["0.0851", "4.600", "19.0"]
    assert fmts == [None, None]
    assert list(claims["fairlib"])[0] == "0.08509999999999995"
