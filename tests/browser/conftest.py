"""Headless Chromium for the browser checks (`make docs-check`, `make browser-test`).

Debian's ``chromium`` and ``chromium-driver`` packages are driven through Selenium; ``make browser-deps`` installs
them. Each test module here sets ``pytestmark = pytest.mark.browser``, so they are left out of the default run
(pyproject's ``-m "not browser"``): they need the browser and, for the docs, a built site.
"""
import shutil

import pytest


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium WebDriver that records the page's console (read it with `browser.pages.console_errors`)."""
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
