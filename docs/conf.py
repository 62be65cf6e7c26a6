"""Sphinx configuration for the fairlib documentation site.

Built by `tools/build_docs.py` (`make docs`), which stages the notebooks of nbs/ and the pages of this folder
into `_docs_build/src` and runs `sphinx-build -c docs`. Everything is offline: no intersphinx, no CDN assets
(MathJax is served from the copy that the `jupyter-server-mathjax` package ships), notebooks are rendered with
the outputs they carry (nb_execution_mode = "off"; only docs/getting-started.md asks for its cells to run, on data
that ships with fairlib). Docstrings are numpydoc, rendered by napoleon; wide notebook outputs scroll inside their
cell (docs/_static/fairlib.css).
"""
from __future__ import annotations
import shutil, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))        # the checkout's fairlib, also without an editable install
import fairlib                        # noqa: E402  (a failing import fails the build, as it should)

project = "fairlib"
author = "fairlib developers"
copyright = "fairlib developers"
release = version = fairlib.__version__

extensions = [
    "myst_nb",                 # .ipynb and .md (MyST) sources
    "sphinx.ext.autodoc",      # the API pages (automodule)
    "sphinx.ext.napoleon",     # numpydoc sections (Parameters, Returns, Raises, Examples) of the docstrings
    "sphinx.ext.mathjax",      # math in notebooks, served locally (below)
    "sphinx.ext.viewcode",     # highlighted source beside the API pages (no network)
]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["**/.ipynb_checkpoints", "_*", "**/_*"]
language = "en"

# --- notebooks --------------------------------------------------------------------------------------------------
nb_execution_mode = "off"              # render what the notebook carries, never run it here
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "html_image"]
myst_heading_anchors = 3               # [text](#a-heading) links inside notebooks resolve
myst_update_mathjax = False            # our MathJax 2 configuration below is used as is
# The notebooks are written for nbdev (a heading may skip a level, a code cell may hold a lexer-less
# language); those are content, not broken references, so only they are tolerated.
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type", "misc.highlighting_failure"]

# --- API pages ---------------------------------------------------------------------------------------------------
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
add_module_names = False
# numpydoc-style docstrings only (a Google-style "Args:" line is ordinary text); types stay as written
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

# --- MathJax, offline ----------------------------------------------------------------------------------------------
# jupyter-server-mathjax ships MathJax 2.7 (what the classic notebook used); it is copied into the
# static files once per build. Only the STIX web fonts are shipped, so the HTML-CSS output uses those.
_STATIC = ROOT / "_docs_build" / "static"


def _local_mathjax() -> Path:
    import jupyter_server_mathjax
    src = Path(jupyter_server_mathjax.__file__).parent / "static"
    dst = _STATIC / "mathjax"
    if not (dst / "MathJax.js").is_file():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    return dst


_local_mathjax()
html_static_path = [str(_STATIC), str(ROOT / "docs" / "_static")]
html_css_files = ["fairlib.css"]       # wide notebook outputs scroll inside their cell (docs/_static/fairlib.css)
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
mathjax2_config = {
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]], "processEscapes": True},
    # MathJax 2's font-load probe declares a font at url('about:blank'), which today's Chromium refuses with a
    # console error; a local() source probes the same way without any request.
    "HTML-CSS": {"availableFonts": [], "imageFont": None, "preferredFont": None, "webFont": "STIX-Web",
                 "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank')"}}},
    # The assistive MathML copy MathJax 2 hides in the page is styled with the TeX web fonts, which the package
    # does not ship (a 404 per page with double-struck or calligraphic letters): the rendered math is kept, the
    # hidden copy is not made.
    "AssistiveMML": {"disabled": True},
    "menuSettings": {"assistiveMML": False},
    "showMathMenu": False,
    "messageStyle": "none",
}

# --- HTML ---------------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "fairlib"
html_short_title = "fairlib"
html_copy_source = False               # no _sources/ copies of the notebooks
html_show_sourcelink = False
html_last_updated_fmt = None
html_search_language = "en"            # Sphinx's built-in full-text search (search.html + searchindex.js)
# Result snippets are fetched from each result page, which a browser refuses for a site opened from disk (file://):
# results list titles only, and the search works the same served or not.
html_show_search_summary = False
html_theme_options = {
    "logo": {"text": "fairlib"},
    "navbar_align": "left",
    "navbar_end": ["theme-switcher"],  # no icon links, no version switcher: nothing to fetch
    "navbar_persistent": ["search-button"],
    "header_links_before_dropdown": 6,
    "show_nav_level": 1,
    "navigation_depth": 3,
    "collapse_navigation": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "show_version_warning_banner": False,   # would fetch a version switcher JSON
    "check_switcher": False,
    "icon_links": [],
    "use_edit_page_button": False,
    "announcement": "",
    "pygments_light_style": "default",
    "pygments_dark_style": "monokai",
}
# The theme's colour mode comes from the page context, not from html_theme_options: left unset, every page logs
# "Got invalid theme mode: . Resetting to auto." as a console error.
html_context = {"default_mode": "auto"}
# The landing page has no section navigation; without a left sidebar there the theme's
# collapse-sidebar button script logs a console error, so the landing page keeps none.
html_sidebars = {"index": [], "search": [], "genindex": [], "py-modindex": []}


# --- docstrings ----------------------------------------------------------------------------------------------------
# fairlib's docstrings are written like Markdown (`code` in single backticks, |x| for an absolute value), while
# autodoc reads reStructuredText. Each docstring is adapted before it is parsed: `x` becomes inline code (``x``)
# and a | outside code is escaped, so no |...| is taken for a substitution.
import inspect, re  # noqa: E402

_CODE = re.compile(r"(``.+?``|(?<![`:\w])`[^`\n]+`(?![`_\w]))")


def _rst_line(line: str) -> str:
    out = []
    for i, part in enumerate(_CODE.split(line)):
        if i % 2:   # inline code: single backticks become literal text
            out.append(part if part.startswith("``") else f"`{part}`")
        else:
            out.append(part.replace("\\", "\\\\").replace("|", "\\|"))
    return "".join(out)


def _markdownish_docstring(app, what, name, obj, options, lines):
    literal = False
    for i, line in enumerate(lines):
        if literal and line.strip() and not line.startswith((" ", "\t")):
            literal = False
        if literal or line.lstrip().startswith((">>>", "... ")):
            continue
        lines[i] = _rst_line(line)
        if line.rstrip().endswith("::"):
            literal = True


def _skip_foreign_routines(app, what, name, obj, skip, options):
    "Class members that fairlib does not define (e.g. scikit-learn's generated set_*_request methods) are not its API."
    target = getattr(obj, "__func__", obj)
    if what == "class" and inspect.isroutine(target):
        module = getattr(target, "__module__", None) or ""
        if module and not module.startswith("fairlib"):
            return True
    return None


def setup(app):
    # before napoleon (priority 500) turns the numpydoc sections into fields, so it reads the text as written
    app.connect("autodoc-process-docstring", _markdownish_docstring, priority=400)
    app.connect("autodoc-skip-member", _skip_foreign_routines)
