"""cosim.explore in JupyterLab, as a student uses it: the fixture notebook ``explore.ipynb`` opened in JupyterLab
(served here on a free localhost port without a token, with a private configuration), its cells run, the macro-step
slider moved; the figure must change (screenshots before and after, pixel difference) and the console stay free of
errors. Run with ``make browser-test``; screenshots ``jupyterlab_*.png`` and the server's log ``jupyterlab.log`` in
``out/screenshots`` (``COSIM_SCREENSHOTS``). The same check in Voila: test_explore_browser.py.
"""
import shutil
import sys

import pytest

from browser.pages import SCREENSHOTS, explore_figure_src, free_port, open_page, screenshot, served, wait_for
from browser.test_explore_browser import NOTEBOOK, check_slider_changes_figure, kernel_env

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    """JupyterLab serving a copy of the fixture notebook on a free localhost port; stopped afterwards. Its
    configuration, settings, workspaces and runtime files live in a temporary folder (nothing of the user's), it
    asks for no token, never checks for updates or news, and exposes the application object to the page
    (``window.jupyterapp``) so that the test runs the cells through JupyterLab's own command."""
    pytest.importorskip("jupyterlab", reason="jupyterlab is in the [jupyter] and [test] extras")
    pytest.importorskip("ipywidgets", reason="ipywidgets is in the [jupyter] extra")
    home = tmp_path_factory.mktemp("jupyterlab")
    root = home / "notebooks"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    env = kernel_env()
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("IPYTHONDIR", "ipython")):
        env[var] = str(home / sub)
    # no news and no update check (they would ask in a toast over the notebook and fetch from the internet)
    notification = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    port = free_port()
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
               "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}", "--IdentityProvider.token=",
               "--ServerApp.password=", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.expose_app_in_browser=True", "--ServerApp.open_browser=False", "--allow-root"]
    with served(command, port, SCREENSHOTS / "jupyterlab.log", env=env, cwd=str(root)):
        yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK.name}"


def _kernel_idle(driver):
    return driver.execute_script(
        "const a = window.jupyterapp; if (!a) return false;"
        "const w = a.shell.currentWidget; if (!w || !w.sessionContext) return false;"
        "const k = w.sessionContext.session && w.sessionContext.session.kernel;"
        "return !!k && k.status === 'idle' && w.content.widgets.length > 0;")


def test_moving_the_H_slider_in_jupyterlab_changes_the_figure(browser, lab_url):
    open_page(browser, lab_url)
    wait_for(lambda: _kernel_idle(browser), 90, "JupyterLab to open the notebook with an idle kernel")
    browser.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells');")
    try:
        wait_for(lambda: explore_figure_src(browser), 120, "the explorer's figure after running the cells")
    finally:
        screenshot(browser, "jupyterlab_ran")
    browser.execute_script("window.jupyterapp.shell.collapseLeft();")  # room for the figure: no file browser
    check_slider_changes_figure(browser, "jupyterlab")
