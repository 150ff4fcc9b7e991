"""Every notebook in notebooks/ runs as a person runs it and shows what it teaches: it executes without a cell
error in a kernel with Jupyter's own (inline) matplotlib backend, produces at least one image, labels every axis of
every figure it shows with its unit (the rule of tests/axis_units.py), takes less than 60 s, never picks a
matplotlib backend itself, and has the teaching structure (learning goals, exercises with collapsible solutions, a
summary)."""
import json
import os
import pathlib
import re
import time

import pytest

from axis_units import problems

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]
MAX_SECONDS = 60.0
# matplotlib.use("Agg"), mpl.use(...), plt.switch_backend(...), %matplotlib agg: a figure then never reaches Jupyter
BACKEND_CALL = re.compile(r"\b(matplotlib|mpl)\s*\.\s*use\s*\(|\bswitch_backend\s*\(|%matplotlib\s+(agg|Agg)\b")


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


# Run before the notebook's cells: every figure the kernel renders (the inline backend's display, savefig) is
# described (axis_units.describe) as it is rendered; the last cell prints what was recorded.
RECORD = f"""import sys as _sys
_sys.path.insert(0, {str(ROOT / "tests")!r})
import matplotlib.backend_bases as _backend_bases
from axis_units import describe as _describe_axes
_figures_shown = []
_print_figure = _backend_bases.FigureCanvasBase.print_figure
def _recording_print_figure(self, *args, **kwargs):
    _figures_shown.append(_describe_axes(self.figure))
    return _print_figure(self, *args, **kwargs)
_backend_bases.FigureCanvasBase.print_figure = _recording_print_figure"""
REPORT = "import json as _json; print('COSIM-FIGURES ' + _json.dumps(_figures_shown))"


def instrument(nb):
    """Add the recording cell before the notebook's cells and the report cell after them."""
    nb.cells = [nbformat.v4.new_code_cell(RECORD)] + nb.cells + [nbformat.v4.new_code_cell(REPORT)]


def recorded_figures(nb):
    """The descriptions of the figures an instrumented, executed notebook rendered; its own cells remain."""
    report = nb.cells.pop()
    nb.cells.pop(0)
    text = "".join(o.get("text", "") for o in report.get("outputs", []) if o.get("output_type") == "stream")
    return json.loads(text.split("COSIM-FIGURES ", 1)[1])


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 9, f"expected the nine teaching notebooks, found {IDS}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_does_not_choose_a_matplotlib_backend(path):
    nb = nbformat.read(path, as_version=4)
    calls = [line for c in code_cells(nb) for line in c.source.splitlines() if BACKEND_CALL.search(line)]
    assert not calls, f"{path.name} sets the matplotlib backend, so Jupyter shows no figure: {calls}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_has_the_teaching_structure(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "Learning goals" in text, f"{path.name}: no learning goals"
    assert re.search(r"^## Summary", text, re.M), f"{path.name}: no '## Summary' section"
    solutions = len(re.findall(r"<details>\s*<summary>Solution</summary>", text))
    assert 2 <= solutions <= 3, f"{path.name}: {solutions} collapsible solutions, expected two or three exercises"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_executes_and_shows_figures(path, monkeypatch):
    # the kernel gets Jupyter's default (inline) backend, and imports the cosim of this checkout
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    nb = nbformat.read(path, as_version=4)
    # committed notebooks carry no outputs (the test suite produces them)
    assert all(not c.get("outputs") for c in code_cells(nb)), f"{path.name}: clear the outputs"
    instrument(nb)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    seconds = time.perf_counter() - start
    figures = recorded_figures(nb)
    outputs = [o for c in code_cells(nb) for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} ran but displayed no figure"
    assert len(figures) >= len(images), "a figure was shown without being recorded"
    found = [p for i, fig in enumerate(figures) for p in problems(fig, f"{path.name} figure {i + 1}")]
    assert not found, "\n".join(found)
    assert seconds < MAX_SECONDS, f"{path.name} took {seconds:.1f} s (limit {MAX_SECONDS:g} s)"
