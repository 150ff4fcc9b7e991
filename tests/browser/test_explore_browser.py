"""cosim.explore as a person uses it: served by Voila, opened in headless Chromium, a slider moved.

The fixture notebook ``explore.ipynb`` shows the explorer for the two-mass oscillator. The test serves it with Voila
on a free localhost port (started and stopped here), waits for the figure, moves the macro-step slider with the
keyboard and checks that the figure changed (screenshots before and after, pixel difference) and that the browser
console shows no error. Run with ``make browser-test`` (``pytest -m browser``); the screenshots and Voila's log are
left in ``out/screenshots`` (``COSIM_SCREENSHOTS``).
"""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from browser.pages import SCREENSHOTS, console_errors, screenshot

pytestmark = pytest.mark.browser

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NOTEBOOK = HERE / "explore.ipynb"
#: the figure counts as changed when at least this fraction of its pixels changed
MIN_CHANGED = 0.01
#: Voila's page template links Font Awesome from this CDN unconditionally; offline (CI) the fetch fails, which is the
#: only console error not about this page's code that the test lets pass
VOILA_CDN = "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def voila_url():
    """Voila serving the fixture notebook on a free localhost port; the server is stopped afterwards."""
    pytest.importorskip("voila", reason="voila is in the [jupyter] extra")
    pytest.importorskip("ipywidgets", reason="ipywidgets is in the [jupyter] extra")
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               MPLBACKEND="Agg")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    log_path = SCREENSHOTS / "voila.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "voila", str(NOTEBOOK), f"--port={port}", "--no-browser",
                             "--Voila.ip=127.0.0.1", "--ServerApp.port_retries=0"],
                            cwd=str(HERE), env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                log.flush()
                pytest.fail(f"voila exited with {proc.returncode} before serving:\n{log_path.read_text()[-3000:]}")
            try:  # the port accepts connections once the server is up
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(f"voila did not answer within 60 s:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _figure_src(driver):
    return driver.execute_script(
        "const i = document.querySelector('.cosim-explore-figure'); return i && i.complete && i.naturalWidth > 0 "
        "? i.src : null;")


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def _figure_pixels(path, driver):
    """The figure's pixels in a page screenshot (RGB array)."""
    from PIL import Image
    rect = driver.execute_script(
        "const r = document.querySelector('.cosim-explore-figure').getBoundingClientRect();"
        "return [r.left, r.top, r.right, r.bottom, window.devicePixelRatio];")
    *box, ratio = rect
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB").crop(tuple(round(v * ratio) for v in box)), dtype=np.int16)


def test_moving_the_H_slider_changes_the_figure(browser, voila_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get_log("browser")  # drop entries of earlier tests
    browser.get(voila_url)
    src0 = _wait(lambda: _figure_src(browser), 120, "the explorer's figure")
    label0 = browser.find_element(By.CSS_SELECTOR, ".cosim-explore-H .widget-readout").text
    before = screenshot(browser, "explore_before")

    handle = browser.find_element(By.CSS_SELECTOR, ".cosim-explore-H .noUi-handle")
    handle.click()
    for _ in range(6):
        handle.send_keys(Keys.ARROW_RIGHT)
    src1 = _wait(lambda: (s := _figure_src(browser)) != src0 and s, 60, "the figure to change after the slider moved")
    label1 = browser.find_element(By.CSS_SELECTOR, ".cosim-explore-H .widget-readout").text
    time.sleep(0.5)  # let the new image paint
    after = screenshot(browser, "explore_after")

    assert label1 != label0, f"the H slider did not move: {label0!r} -> {label1!r}"
    assert src1 != src0
    a, b = _figure_pixels(before, browser), _figure_pixels(after, browser)
    assert a.shape == b.shape and a.size > 0
    changed = float(np.mean(np.any(a != b, axis=2)))
    assert changed > MIN_CHANGED, f"only {changed:.2%} of the figure's pixels changed"
    errors = [e for e in console_errors(browser)
              if not (e.startswith(VOILA_CDN) and "Failed to load resource: net::ERR_" in e)]
    assert not errors, errors
