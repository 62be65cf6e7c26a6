"""The documentation site (`make docs`, tools/build_docs.py) in a real browser.

The site is built once per session (or reused when `_site/` was built from the same inputs), served by
http.server on 127.0.0.1, and every HTML page is opened in headless Chromium through Playwright. A page fails
on any console error, any uncaught page error, a request that fails or answers >= 400, a request that leaves
the machine (the site must work offline), an internal link whose target file (or anchor in it) does not
exist, an <img> that does not load (naturalWidth == 0), or a missing <title>. Sphinx's full-text search is
exercised, and 1280-px-wide screenshots of the landing page and of a paper notebook page are kept in
`runs/test-artifacts/` as artefacts.

Chromium: /usr/bin/chromium (Debian's `chromium` package; `.ci/run` installs it when absent), or the
executable named by $CHROMIUM_PATH. Playwright's own browser download is not used.
"""

from __future__ import annotations
import functools, http.server, importlib.util, json, re, struct, threading, time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from chromium import chromium_path

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
        b = p.chromium.launch(
            executable_path=chromium_path(), headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
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
    assert not problems, f"{len(problems)} problem(s) on {len(pages)} pages:\n" + "\n".join(problems[:80])
    assert links_checked > len(pages), "the pages link to (almost) nothing: the navigation is missing"


def test_full_text_search_finds_pages(server, browser):
    "Sphinx's built-in search (search.html + searchindex.js) returns result pages for a word of the notebooks."
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 900})
    page = ctx.new_page()
    rec = Recorder(page, server)
    rec.current = "search.html"
    page.goto(server + "search.html?q=verdict", wait_until="load")
    page.wait_for_selector("#search-results ul.search li a", timeout=30_000)
    hits = page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(e => e.href)")
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
    shots = {"docs-index.png": ("index.html", True), "docs-paper.png": (_paper_page(site["path"]), False)}
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
    (ARTIFACTS / "docs-screenshots.json").write_text(json.dumps({k: v[0] for k, v in shots.items()}, indent=1) + "\n")
    for name in shots:
        out = ARTIFACTS / name
        assert out.is_file() and out.stat().st_size > 1000, f"{out} is missing or empty"
        w, h = _png_size(out)
        assert w == WIDTH and h >= 600, (name, w, h)
