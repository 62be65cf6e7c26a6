"""The documentation site (`make docs`, tools/build_docs.py) in a real browser.

The site is built once per session (or reused when `_site/` was built from the same inputs), served by
http.server on 127.0.0.1, and every HTML page is opened in headless Chromium through Playwright. A page fails
on any console error, any uncaught page error, a request that fails or answers >= 400, a request that leaves
the machine (the site must work offline), an internal link whose target file (or anchor in it) does not
exist, an <img> that does not load (naturalWidth == 0), a missing <title>, a figure placeholder in a notebook
output (`<Figure size 640x480 with 1 Axes>`, `<matplotlib... at 0x...>`, `<IPython.core.display.Image object>`: a figure
printed instead of shown), a table cut off at the edge of the page instead of scrolling, or a page wider than the
window. On a paper page a table cell may not print a float at full precision (more than four decimals and more
than four significant digits, such as 0.497959 or 0.00044912). Sphinx's full-text search is exercised, and
1280-px-wide screenshots of the landing page and of a paper notebook page are kept in `runs/test-artifacts/`.

Without a browser, every figure a paper notebook saved is checked to be shown in an executed notebook of that
paper (an image output with the PNG file's bytes): the committed `nbs/papers/` against `figures/`, and, when
`make test`'s smoke run has left them, the notebooks under `runs/smoke/` against `runs/smoke/figures/`.

Chromium: /usr/bin/chromium (Debian's `chromium` package; `make test` installs it when absent), or the
executable named by $CHROMIUM_PATH. Playwright's own browser download is not used.
"""

from __future__ import annotations
import base64, functools, hashlib, http.server, importlib.util, json, re, struct, threading, time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from chromium import launch

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "runs" / "test-artifacts"
WIDTH = 1280
pytestmark = [pytest.mark.xdist_group("docs"), pytest.mark.slow]


def _build_docs_module():
    spec = importlib.util.spec_from_file_location("build_docs", ROOT / "tools" / "build_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def site() -> dict:
    "The built site (rebuilt only when its inputs changed), with the build time."
    bd = _build_docs_module()
    t0 = time.perf_counter()
    fresh = bd.is_fresh()
    try:
        path = bd.build(if_stale=True)
    except SystemExit as e:
        pytest.fail(f"the documentation build failed: {e}")
    return dict(path=path, build_s=time.perf_counter() - t0, rebuilt=not fresh)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def server(site):
    handler = functools.partial(_Quiet, directory=str(site["path"]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join(10)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


class Recorder:
    "Console errors, page errors, failed and off-site requests, attributed to the page being checked."

    def __init__(self, page, base: str):
        self.base, self.current, self.problems = base, None, []
        page.on("console", lambda m: m.type == "error" and self.add(f"console error: {m.text}"))
        page.on("pageerror", lambda e: self.add(f"page error: {e}"))
        page.on("requestfailed", lambda r: self.add(f"request failed: {r.url} ({r.failure})"))
        page.on("response", lambda r: r.status >= 400 and self.add(f"HTTP {r.status}: {r.url}"))
        # nothing may leave the machine: any request outside the local server is refused and reported
        page.route(
            re.compile(r"^(?!" + re.escape(base) + ")(https?|wss?|ftp)://.*"),
            lambda route: (self.add(f"off-site request: {route.request.url}"), route.abort()),
        )

    def add(self, msg: str) -> None:
        self.problems.append((self.current, msg))


MATHJAX_DONE = """() => new Promise(resolve => {
    if (window.MathJax && window.MathJax.Hub && window.MathJax.Hub.Queue) window.MathJax.Hub.Queue(() => resolve(true));
    else resolve(false);
})"""
IMAGES_SETTLED = """() => Promise.all(Array.from(document.images).map(img => {
    img.loading = "eager";
    if (img.complete) return null;
    return new Promise(r => { img.addEventListener("load", r); img.addEventListener("error", r); });
}))"""

TITLE = "() => { const t = document.querySelector('head > title'); return t ? t.textContent.trim() : null; }"
BROKEN_IMAGES = "els => els.filter(e => e.naturalWidth === 0).map(e => e.currentSrc || e.src)"
# what a notebook prints for a figure it did not show (matplotlib's and IPython's text reprs)
PLACEHOLDER = re.compile(
    r"<Figure size [\d.]+x[\d.]+ with \d+ Axes>|<matplotlib\.[\w.]+ (?:object )?at 0x[0-9a-f]+>"
    r"|<IPython\.core\.display\.\w+ object>"
)
# the text of a page's notebook outputs (myst-nb's cell_output blocks): prose about a placeholder is not one
OUTPUT_TEXT = (
    "() => Array.from(document.querySelectorAll('div.cell_output'), e => e.innerText).join('\\n')"
)
# a table wider than the article must sit in a box that scrolls sideways (overflow-x auto/scroll) and that fits the
# article; an ancestor that hides the overflow first means the table is cut off
CLIPPED_TABLES = """els => {
    const art = document.querySelector('article') || document.querySelector('main') || document.body;
    const a = art.getBoundingClientRect();
    const out = [];
    for (const t of els) {
        if (!t.offsetParent) continue;
        const r = t.getBoundingClientRect();
        if (r.left >= a.left - 1 && r.right <= a.right + 1) continue;
        let ok = false;
        for (let e = t.parentElement; e && e !== document.documentElement; e = e.parentElement) {
            const ox = getComputedStyle(e).overflowX;
            if (ox === 'auto' || ox === 'scroll') {
                const er = e.getBoundingClientRect();
                ok = er.right <= a.right + 1 && e.scrollWidth >= t.scrollWidth;
                break;
            }
            if (ox === 'hidden' || ox === 'clip') break;
        }
        if (!ok) out.push(`${Math.round(r.width)} px wide, article ${Math.round(a.width)} px: ` +
                          (t.innerText || '').trim().slice(0, 60).replace(/\\s+/g, ' '));
    }
    return out;
}"""
PAGE_WIDTH = "() => [document.documentElement.scrollWidth, window.innerWidth]"
CELLS = "els => els.map(e => e.innerText.trim())"


def _ids(path: Path, cache: dict) -> set[str]:
    if path not in cache:
        html = path.read_text(encoding="utf-8", errors="replace")
        cache[path] = set(re.findall(r"""\b(?:id|name)=["']([^"']+)["']""", html))
    return cache[path]


def _target(site_dir: Path, base: str, href: str) -> tuple[Path, str] | None:
    "The file (and fragment) an internal link points at; None for links that leave the site."
    if not href.startswith(base):
        return None
    parts = urlsplit(href)
    rel = unquote(parts.path)[len(urlsplit(base).path) :]
    path = site_dir / rel
    if rel == "" or rel.endswith("/"):
        path = path / "index.html"
    return path, unquote(parts.fragment)


def full_precision(text: str) -> bool:
    "A number printed at full precision: more than four decimals and more than four significant digits."
    m = re.fullmatch(r"[-+]?(\d+)\.(\d+)", text.strip())
    if not m or len(m.group(2)) <= 4:
        return False
    return len((m.group(1) + m.group(2)).lstrip("0")) > 4


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_every_page_loads_cleanly_and_links_resolve(site, server, browser):
    site_dir: Path = site["path"]
    # every page of the site; _static/ holds assets (the theme ships a Jinja macro file named .html there)
    pages = sorted(
        p.relative_to(site_dir).as_posix()
        for p in site_dir.rglob("*.html")
        if p.relative_to(site_dir).parts[0] != "_static"
    )
    assert "index.html" in pages and "search.html" in pages
    assert any(p.startswith("papers/") for p in pages) and any(p.startswith("api/") for p in pages)
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 900})
    page = ctx.new_page()
    rec = Recorder(page, server)
    ids_cache, links_checked, t0 = {}, 0, time.perf_counter()
    for rel in pages:
        rec.current = rel
        page.goto(server + rel, wait_until="load")
        page.evaluate(MATHJAX_DONE)
        page.evaluate(IMAGES_SETTLED)
        title = page.evaluate(TITLE)
        if not title:
            rec.add("no <title>")
        for src in page.eval_on_selector_all("img", BROKEN_IMAGES):
            rec.add(f"image does not load: {src}")
        for ph in sorted(set(PLACEHOLDER.findall(page.evaluate(OUTPUT_TEXT)))):
            rec.add(f"figure placeholder printed instead of the figure: {ph}")
        for t in page.eval_on_selector_all("table", CLIPPED_TABLES):
            rec.add(f"table cut off instead of scrolling: {t}")
        scroll_w, win_w = page.evaluate(PAGE_WIDTH)
        if scroll_w > win_w + 1:
            rec.add(f"page is {scroll_w} px wide in a {win_w} px window")
        if rel.startswith("papers/"):
            long = [c for c in page.eval_on_selector_all("table td", CELLS) if full_precision(c)]
            if long:
                rec.add(f"{len(long)} table cell(s) at full precision, e.g. {long[:3]}")
        for href in set(page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")):
            if href.startswith(("file:", "javascript:")):
                rec.add(f"link to {href}")
                continue
            t = _target(site_dir, server, href)
            if t is None:
                continue
            links_checked += 1
            path, frag = t
            if not path.is_file():
                rec.add(f"broken link: {href} (no {path.relative_to(site_dir)})")
            elif frag and path.suffix == ".html" and frag not in _ids(path, ids_cache):
                rec.add(f"broken anchor: {href} (no id {frag!r} in {path.relative_to(site_dir)})")
    browse_s = time.perf_counter() - t0
    ctx.close()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "docs-site-timing.json").write_text(
        json.dumps(
            dict(
                pages=len(pages),
                internal_links_checked=links_checked,
                build_or_reuse_s=round(site["build_s"], 1),
                rebuilt=site["rebuilt"],
                browse_s=round(browse_s, 1),
            ),
            indent=1,
        )
        + "\n"
    )
    problems = [f"{where}: {msg}" for where, msg in rec.problems]
    (ARTIFACTS / "docs-site-problems.txt").write_text("".join(p + "\n" for p in problems))
    assert not problems, f"{len(problems)} problem(s) on {len(pages)} pages:\n" + "\n".join(
        problems[:80]
    )
    assert links_checked > len(pages), (
        "the pages link to (almost) nothing: the navigation is missing"
    )


def test_the_checks_above_can_fail():
    "The placeholder and precision rules on known text (a page that passes them is not passing vacuously)."
    assert PLACEHOLDER.findall("x <Figure size 640x480 with 1 Axes> y") == [
        "<Figure size 640x480 with 1 Axes>"
    ]
    assert PLACEHOLDER.search("<Figure size 1300x420 with 4 Axes>") and PLACEHOLDER.search(
        "[<matplotlib.lines.Line2D at 0x7f1c2a3b4c50>]"
    )
    assert PLACEHOLDER.search("<IPython.core.display.Image object>") and not PLACEHOLDER.search(
        "a figure"
    )
    assert [full_precision(t) for t in ("0.497959", "0.00044912", "1883.119394", "-65.19130")] == [
        True
    ] * 4
    assert not any(
        full_precision(t)
        for t in ("0.498", "0.0851", "0.00605", "4.1e-05", "336", "0.000449", "text")
    )


def _shown_figures(notebooks: list[Path]) -> set[str]:
    "sha256 of every PNG shown as an image output of these executed notebooks."
    out = set()
    for nb in notebooks:
        for cell in json.loads(nb.read_text(encoding="utf-8")).get("cells", []):
            for o in cell.get("outputs", []):
                png = o.get("data", {}).get("image/png")
                if png:
                    out.add(hashlib.sha256(base64.b64decode("".join(png))).hexdigest())
    return out


def _runs_to_check() -> list[tuple[str, Path, Path]]:
    "(label, executed notebooks folder, figures folder) per paper: the committed ones, and the smoke run's if any."
    out = []
    for figs in sorted(p for p in (ROOT / "figures").iterdir() if p.is_dir()):
        out.append((f"nbs/papers/{figs.name}", ROOT / "nbs" / "papers" / figs.name, figs))
    smoke = ROOT / "runs" / "smoke"
    for figs in sorted(p for p in (smoke / "figures").glob("*") if p.is_dir()):
        out.append((f"runs/smoke/{figs.name}", smoke / figs.name, figs))
    return out


def test_every_saved_figure_is_shown_in_its_notebook():
    "Each PNG in a paper's figures folder is an image output of one of that paper's executed notebooks."
    missing, checked = [], 0
    for label, nbs, figs in _runs_to_check():
        pngs = sorted(figs.glob("*.png"))
        if not pngs:
            continue
        shown = _shown_figures(sorted(nbs.glob("*.ipynb")))
        checked += len(pngs)
        missing += [
            f"{label}: {p.name}"
            for p in pngs
            if hashlib.sha256(p.read_bytes()).hexdigest() not in shown
        ]
    assert checked, "no paper figure found under figures/"
    assert not missing, (
        f"{len(missing)} of {checked} saved figures are not shown in their notebook:\n"
        + "\n".join(missing)
    )


def test_cli_page_lists_every_subcommand_and_option(site):
    "The CLI page shows every subcommand and every visible option of the `fairlib` parser, and a real example run."
    import argparse

    parser = _build_docs_module().cli_parser()
    html = (site["path"] / "cli.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", html)
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, sub in subs.choices.items():
        if f"fairlib {name}" not in text:
            missing.append(f"subcommand {name}")
        for a in sub._actions:
            if a.help == argparse.SUPPRESS or isinstance(a, argparse._HelpAction):
                continue  # -h is in the usage line
            missing += [
                f"{name} {o}"
                for o in a.option_strings
                if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)
            ]
    assert len(subs.choices) >= 2 and not missing, missing
    assert "$ fairlib audit chapter_example.csv" in text and "Fairness audit: 1,000 records" in text


def test_full_text_search_finds_pages(server, browser):
    "Sphinx's built-in search (search.html + searchindex.js) returns result pages for a word of the notebooks."
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 900})
    page = ctx.new_page()
    rec = Recorder(page, server)
    rec.current = "search.html"
    page.goto(server + "search.html?q=verdict", wait_until="load")
    page.wait_for_selector("#search-results ul.search li a", timeout=30_000)
    hits = page.eval_on_selector_all(
        "#search-results ul.search li a", "els => els.map(e => e.href)"
    )
    ctx.close()
    assert hits and all(h.startswith(server) for h in hits), hits[:5]
    assert any("/vfr/" in h or "verdict" in h for h in hits), hits[:10]
    assert not rec.problems, rec.problems


def test_site_works_opened_from_disk(site, browser):
    "The README says _site/index.html can be opened straight from disk: pages, math and search work over file://."
    site_dir: Path = site["path"]
    math_pages = sorted(
        p
        for p in site_dir.rglob("*.html")
        if "_static" not in p.parts and 'class="math' in p.read_text(errors="replace")
    )
    urls = [(site_dir / "index.html").as_uri()] + [p.as_uri() for p in math_pages[:1]]
    urls.append((site_dir / "search.html").as_uri() + "?q=verdict")
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 900})
    page = ctx.new_page()
    problems = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.route(
        re.compile(r"^(https?|wss?|ftp)://.*"),
        lambda route: (problems.append(f"off-site request: {route.request.url}"), route.abort()),
    )
    for url in urls:
        page.goto(url, wait_until="load")
        page.evaluate(MATHJAX_DONE)
    page.wait_for_selector("#search-results ul.search li a", timeout=30_000)
    page.wait_for_timeout(500)  # anything the results list would still fetch
    ctx.close()
    assert not problems, problems[:20]


def _paper_page(site_dir: Path) -> str:
    "A paper notebook page, preferring nbs/papers/vfr/ and, there, the page with the most figures."
    for folder in ("papers/vfr", "papers"):
        cands = sorted(site_dir.glob(f"{folder}/**/*.html"))
        if cands:
            return (
                max(
                    cands,
                    key=lambda p: (
                        p.read_text(errors="replace").count("<img"),
                        "00_methods" not in p.name,
                        -cands.index(p),
                    ),
                )
                .relative_to(site_dir)
                .as_posix()
            )
    pytest.fail("the site has no paper notebook page")


def test_screenshots_of_the_landing_page_and_a_paper_notebook(site, server, browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots = {
        "docs-index.png": ("index.html", True),
        "docs-paper.png": (_paper_page(site["path"]), False),
    }
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 1000})
    page = ctx.new_page()
    for name, (rel, full) in shots.items():
        out = ARTIFACTS / name
        if out.exists():
            out.unlink()
        page.goto(server + rel, wait_until="load")
        page.evaluate(MATHJAX_DONE)
        page.evaluate(IMAGES_SETTLED)
        page.screenshot(path=str(out), full_page=full)
    ctx.close()
    (ARTIFACTS / "docs-screenshots.json").write_text(
        json.dumps({k: v[0] for k, v in shots.items()}, indent=1) + "\n"
    )
    for name in shots:
        out = ARTIFACTS / name
        assert out.is_file() and out.stat().st_size > 1000, f"{out} is missing or empty"
        w, h = _png_size(out)
        assert w == WIDTH and h >= 600, (name, w, h)
