"""What the browser checks read from a page (console errors, broken images, screenshots, the explorer's figure and
its pixels) and the local server they open it from.

Test modules import these as ``from browser.pages import ...`` (tests/browser is a package, so that its conftest
does not shadow tests/conftest.py).
"""
import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

SCREENSHOTS = Path(os.environ.get("COSIM_SCREENSHOTS", "out/screenshots"))


def console_errors(driver):
    """The SEVERE entries of the browser console since the last call (the log is drained on read)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def broken_images(driver):
    """The src of every <img> on the page that did not load."""
    return driver.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);")


def screenshot(driver, name):
    """Save a PNG of the current page under SCREENSHOTS and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def free_port():
    """A free TCP port on localhost."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    """The first true value of ``predicate()``, polled every 0.2 s; the test fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


@contextlib.contextmanager
def served(command, port, log_path, env=None, cwd=None, timeout=60):
    """Run the server ``command`` (a list) until the block ends; enter once ``port`` on localhost accepts
    connections. Its output goes to ``log_path``; the test fails with the log's end if the server exits early or
    does not answer within ``timeout`` seconds."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    log.flush()
                    pytest.fail(f"{command[2]} exited with {proc.returncode} before serving:\n"
                                f"{log_path.read_text()[-3000:]}")
                try:  # the port accepts connections once the server is up
                    socket.create_connection(("127.0.0.1", port), timeout=2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        log.flush()
                        pytest.fail(f"{command[2]} did not answer within {timeout} s:\n{log_path.read_text()[-3000:]}")
                    time.sleep(0.3)
            yield
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def explore_figure_src(driver):
    """The src of the explorer's figure image once it has loaded, else None."""
    return driver.execute_script(
        "const i = document.querySelector('.cosim-explore-figure'); return i && i.complete && i.naturalWidth > 0 "
        "? i.src : null;")


def element_pixels(path, driver, selector):
    """The pixels (RGB int16 array) of the first element matching the CSS ``selector`` in the page screenshot
    ``path``, taken while the element was where it is now."""
    from PIL import Image
    rect = driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return [r.left, r.top, r.right, r.bottom, window.devicePixelRatio];", selector)
    *box, ratio = rect
    box = tuple(round(v * ratio) for v in box)
    with Image.open(path) as im:
        # the whole element must be on the screenshot: a crop beyond its edge would be padded with black
        assert box[0] >= 0 and box[1] >= 0 and box[2] <= im.width and box[3] <= im.height, \
            f"{selector} at {box} is not inside the {im.width}x{im.height} screenshot {path}"
        return np.asarray(im.convert("RGB").crop(box), dtype=np.int16)


def scroll_into_view(driver, selector):
    """Scroll the first element matching ``selector`` into the middle of the window."""
    driver.execute_script("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", selector)


def changed_fraction(a, b):
    """The fraction of pixels that differ between two equally shaped RGB arrays."""
    assert a.shape == b.shape and a.size > 0, (a.shape, b.shape)
    return float(np.mean(np.any(a != b, axis=2)))


def open_page(driver, url):
    """Open ``url`` with an empty console log: the page before is left for about:blank first, so that what it logs
    while unloading (closed websockets of a Jupyter page) is dropped with the rest of its entries."""
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get(url)
