"""Headless Chromium for the browser checks (`make docs-check`, `make browser-test`).

Debian's ``chromium`` and ``chromium-driver`` packages are driven through Selenium; ``make browser-deps`` installs
them. Each test module here sets ``pytestmark = pytest.mark.browser``, so they are left out of the default run (pyproject's ``-m "not browser"``):
they need the browser and, for the docs, a built site.
"""
import os
import shutil
from pathlib import Path

import pytest

SCREENSHOTS = Path(os.environ.get("COSIM_SCREENSHOTS", "out/screenshots"))


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium WebDriver that records the page's console (read it with `console_errors`)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the [test] extra")
    chromium = shutil.which("chromium")
    driver_bin = shutil.which("chromedriver")
    if chromium is None or driver_bin is None:
        pytest.fail("headless Chromium is missing: `make browser-deps` installs Debian's chromium and chromium-driver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.webdriver.chrome.service import Service
    driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


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
