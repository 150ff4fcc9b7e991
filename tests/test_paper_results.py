"""tests/paper_results.toml (the source of docs/papers.md) agrees with the test suite.

Every entry names a test function that exists; "reproduced" tests carry no xfail, "not reproduced" ones do (and say
what cosim measures); every xfail test of the suite is in the file, so a new failed reproduction cannot be left
off the documentation. Checked by importing the test modules and reading their marks (nothing is run)."""
import importlib.util
import pathlib

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

TESTS = pathlib.Path(__file__).resolve().parent
SOURCE = TESTS / "paper_results.toml"
STATUSES = ("reproduced", "partial", "not reproduced")


def entries():
    with open(SOURCE, "rb") as fh:
        papers = tomllib.load(fh)
    return [(key, r) for key, paper in papers.items() for r in paper["results"]]


def import_test_file(path):
    """Import tests/<file> under a private name (its fixtures and helpers import as in a pytest run)."""
    spec = importlib.util.spec_from_file_location(f"_paper_results_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module




def is_xfail(function, module):
    marks = list(getattr(function, "pytestmark", [])) + list(getattr(module, "pytestmark", []))
    return any(m.name == "xfail" for m in marks)


_modules = {}


def resolve(node):
    file, _, name = node.partition("::")
    path = TESTS.parent / file
    assert path.is_file(), f"{node}: no file {file}"
    if path not in _modules:
        _modules[path] = import_test_file(path)
    module = _modules[path]
    function = getattr(module, name.split("[")[0], None)
    assert callable(function), f"{node}: no test {name} in {file}"
    return function, module


@pytest.mark.parametrize("key, entry", entries(), ids=[e["test"].split("::")[1] for _, e in entries()])
def test_entry_matches_the_suite(key, entry):
    assert entry["status"] in STATUSES, f"{key}: status {entry['status']!r} not one of {STATUSES}"
    assert entry["result"].strip(), f"{key}: empty result"
    function, module = resolve(entry["test"])
    xfail = is_xfail(function, module)
    if entry["status"] == "reproduced":
        assert not xfail, f"{entry['test']} is marked xfail but listed as reproduced"
    if entry["status"] == "not reproduced":
        assert xfail, f"{entry['test']} is listed as not reproduced but is not marked xfail"
    if entry["status"] != "reproduced":
        assert entry.get("measured", "").strip(), f"{entry['test']}: say what cosim measures"


def test_every_xfail_of_the_suite_is_listed():
    listed = {e["test"].split("[")[0] for _, e in entries()}
    missing = []
    for path in sorted(TESTS.glob("test_*.py")):
        if "xfail" not in path.read_text(encoding="utf-8") or path.name == pathlib.Path(__file__).name:
            continue
        if path not in _modules:
            _modules[path] = import_test_file(path)
        module = _modules[path]
        for name, function in vars(module).items():
            if name.startswith("test") and callable(function) and is_xfail(function, module):
                node = f"tests/{path.name}::{name}"
                if node not in listed:
                    missing.append(node)
    assert not missing, f"xfail tests missing from tests/paper_results.toml: {missing}"


def test_entries_are_unique():
    nodes = [e["test"] for _, e in entries()]
    assert len(nodes) == len(set(nodes)), "a test is listed twice"
