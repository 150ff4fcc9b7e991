"""The built documentation site (`make docs`) in headless Chromium: `make docs-check`.

The site is served over HTTP from docs/_build/html (as a reader would see it; file:// URLs make browsers refuse
the theme's scripts). Each page must render its main content, load every image, log no console error, and every
link on it that points into the site must reach an existing page (and, with a #fragment, an existing anchor of that
page). Screenshots go to out/screenshots/docs_*.png.
"""
import functools
import http.server
import pathlib
import threading
import time
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from .pages import broken_images, console_errors, screenshot

pytestmark = pytest.mark.browser

SITE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "_build" / "html"
PAGES = {
    "index": "index.html",
    "getting_started": "getting_started.html",
    "api_simulate": "generated/cosim.simulate.html",
    "gallery_first_cosimulation": "auto_examples/first_cosimulation.html",
    "concepts": "concepts.html",
    "papers": "papers.html",
}


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site in {SITE}: run `make docs` first (make docs-check does)")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no request log on stderr
        pass


class _Anchors(HTMLParser):
    """The id and name attributes of an HTML file."""

    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


@functools.lru_cache(maxsize=None)
def anchors(path):
    parser = _Anchors()
    parser.feed(path.read_text(encoding="utf-8"))
    return frozenset(parser.ids)


def broken_internal_links(driver, base):
    """Links of the current page into the site whose page or #anchor does not exist."""
    hrefs = driver.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);")
    broken = []
    for href in hrefs:
        if not href.startswith(base):
            continue  # another site (numpy.org, ...): not checked offline
        url, fragment = urldefrag(href)
        path = SITE / urlparse(url).path[len(urlparse(base).path):]
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            broken.append(href)
        elif fragment and path.suffix == ".html" and fragment not in anchors(path):
            broken.append(href)
    return broken


@pytest.mark.parametrize("name", list(PAGES))
def test_page(browser, site, name):
    url = urljoin(site, PAGES[name])
    console_errors(browser)  # drain what earlier pages logged
    browser.get(url)
    browser.execute_script("return document.readyState")
    shot = screenshot(browser, f"docs_{name}")
    title = browser.title
    text = browser.execute_script(
        "const m = document.querySelector('main') || document.body; return m.innerText;")
    assert "404" not in title and len(text.strip()) > 300, f"{url} renders (almost) empty: {len(text)} characters"
    assert browser.execute_script("return document.querySelectorAll('h1').length") >= 1, f"{url} has no heading"
    assert not broken_images(browser), f"{url}: images that did not load: {broken_images(browser)}"
    errors = console_errors(browser)
    assert not errors, f"{url}: console errors: {errors}"
    broken = broken_internal_links(browser, site)
    assert not broken, f"{url}: broken internal links: {broken}"
    assert shot.stat().st_size > 10_000, f"{shot} is suspiciously small"


def test_figures_are_shown(browser, site):
    """The getting-started page shows the first co-simulation's figure, the gallery page the figure it made."""
    for page in ("getting_started.html", "auto_examples/first_cosimulation.html"):
        browser.get(urljoin(site, page))
        sizes = browser.execute_script(
            "return Array.from(document.querySelectorAll('main img')).map(i => i.naturalWidth);")
        assert any(w >= 300 for w in sizes), f"{page}: no figure rendered (image widths {sizes})"


def test_math_is_typeset(browser, site):
    """MathJax (served by the site, no CDN) typesets the formulas of the concepts page."""
    browser.get(urljoin(site, "concepts.html"))
    for _ in range(50):
        if browser.execute_script("return document.querySelectorAll('mjx-container').length") > 3:
            break
        time.sleep(0.1)
    assert browser.execute_script("return document.querySelectorAll('mjx-container').length") > 3, \
        "concepts.html: the formulas were not typeset"
    assert "\\dot x_i" not in browser.execute_script("return document.querySelector('main').innerText;")
