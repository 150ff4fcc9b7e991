"""Every notebook in notebooks/ runs as a person runs it and shows what it teaches: it executes without a cell
error in a kernel with Jupyter's own (inline) matplotlib backend, produces at least one image, takes less than
60 s, never picks a matplotlib backend itself, and has the teaching structure (learning goals, exercises with
collapsible solutions, a summary)."""
import os
import pathlib
import re
import time

import pytest

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
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    seconds = time.perf_counter() - start
    outputs = [o for c in code_cells(nb) for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} ran but displayed no figure"
    assert seconds < MAX_SECONDS, f"{path.name} took {seconds:.1f} s (limit {MAX_SECONDS:g} s)"
