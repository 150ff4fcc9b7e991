"""What the browser checks read from a page: console errors, broken images, screenshots.

Test modules import these as ``from browser.pages import ...`` (tests/browser is a package, so that its conftest
does not shadow tests/conftest.py).
"""
import os
from pathlib import Path

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
