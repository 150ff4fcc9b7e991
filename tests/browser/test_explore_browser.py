"""cosim.explore as a person uses it: served by Voila, opened in headless Chromium, a slider moved.

The fixture notebook ``explore.ipynb`` shows the explorer for the two-mass oscillator. The test serves it with Voila
on a free localhost port (started and stopped here), waits for the figure, moves the macro-step slider with the
keyboard and checks that the figure changed (screenshots before and after, pixel difference) and that the browser
console shows no error. Run with ``make browser-test`` (``pytest -m browser``); the screenshots and Voila's log are
left in ``out/screenshots`` (``COSIM_SCREENSHOTS``). The same check in JupyterLab: test_explore_jupyterlab.py.
"""
import os
import sys
import time
from pathlib import Path

import pytest

from browser.pages import (SCREENSHOTS, changed_fraction, console_errors, element_pixels, explore_figure_src,
                           free_port, open_page, screenshot, scroll_into_view, served, wait_for)

pytestmark = pytest.mark.browser

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NOTEBOOK = HERE / "explore.ipynb"
FIGURE = ".cosim-explore-figure"
#: the figure counts as changed when at least this fraction of its pixels changed
MIN_CHANGED = 0.01
#: Voila's page template links Font Awesome from this CDN unconditionally; offline (CI) the fetch fails, which is the
#: only console error not about this page's code that the test lets pass
VOILA_CDN = "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@"


def kernel_env():
    """The environment of a server whose kernels import the cosim of this checkout and draw with Agg."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return dict(os.environ, PYTHONPATH=path, MPLBACKEND="Agg")


@pytest.fixture(scope="module")
def voila_url():
    """Voila serving the fixture notebook on a free localhost port; the server is stopped afterwards."""
    pytest.importorskip("voila", reason="voila is in the [jupyter] extra")
    pytest.importorskip("ipywidgets", reason="ipywidgets is in the [jupyter] extra")
    port = free_port()
    command = [sys.executable, "-m", "voila", str(NOTEBOOK), f"--port={port}", "--no-browser", "--Voila.ip=127.0.0.1",
               "--ServerApp.port_retries=0"]
    with served(command, port, SCREENSHOTS / "voila.log", env=kernel_env(), cwd=str(HERE)):
        yield f"http://127.0.0.1:{port}/"


def move_H_slider(driver, steps=6):
    """Move the explorer's macro-step slider ``steps`` options to the right with the keyboard, as a person does;
    returns its readout before and after."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    readout = ".cosim-explore-H .widget-readout"
    before = driver.find_element(By.CSS_SELECTOR, readout).text
    handle = driver.find_element(By.CSS_SELECTOR, ".cosim-explore-H .noUi-handle")
    handle.click()
    for _ in range(steps):
        handle.send_keys(Keys.ARROW_RIGHT)
    return before, driver.find_element(By.CSS_SELECTOR, readout).text


def check_slider_changes_figure(driver, name, allowed_errors=lambda e: False):
    """With the explorer's figure shown: move the H slider, wait for the new figure and check that it differs
    from the old one in at least MIN_CHANGED of its pixels and that the console logged no error (other than those
    ``allowed_errors`` accepts). Screenshots: ``{name}_before.png``, ``{name}_after.png``."""
    src0 = explore_figure_src(driver)
    scroll_into_view(driver, FIGURE)
    time.sleep(0.5)  # let the image paint
    before = screenshot(driver, f"{name}_before")
    a = element_pixels(before, driver, FIGURE)
    label0, label1 = move_H_slider(driver)
    src1 = wait_for(lambda: (s := explore_figure_src(driver)) != src0 and s, 60,
                    "the figure to change after the slider moved")
    scroll_into_view(driver, FIGURE)  # clicking the slider may have scrolled the page
    time.sleep(0.5)
    after = screenshot(driver, f"{name}_after")
    assert label1 != label0, f"the H slider did not move: {label0!r} -> {label1!r}"
    assert src1 != src0
    changed = changed_fraction(a, element_pixels(after, driver, FIGURE))
    assert changed > MIN_CHANGED, f"only {changed:.2%} of the figure's pixels changed"
    errors = [e for e in console_errors(driver) if not allowed_errors(e)]
    assert not errors, errors


def test_moving_the_H_slider_changes_the_figure(browser, voila_url):
    open_page(browser, voila_url)
    wait_for(lambda: explore_figure_src(browser), 120, "the explorer's figure")
    check_slider_changes_figure(browser, "explore",
                                lambda e: e.startswith(VOILA_CDN) and "Failed to load resource: net::ERR_" in e)
