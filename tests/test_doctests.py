"""The Examples sections of the main entry points' docstrings run as doctests (they are shown in the API
reference, so they must stay true)."""
import doctest
import importlib

import pytest

MODULES = ["cosim.simulate", "cosim.system", "cosim.result", "cosim.stability", "cosim.doe.study"]


@pytest.mark.parametrize("modname", MODULES)
def test_docstring_examples(modname, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(modname)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    tests = [t for t in finder.find(module, modname, globs={}) if t.examples]
    assert tests, f"{modname} has no docstring examples"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {modname} fail"
