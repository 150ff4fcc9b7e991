"""Every public name of cosim (tests/public_api.py says which) is listed in the API reference, docs/api.rst."""
import importlib
import inspect
import pathlib
import re

import pytest

from public_api import MODULES, public_names

API = pathlib.Path(__file__).resolve().parent.parent / "docs" / "api.rst"


def listed():
    """{module: {names}} of the autosummary entries of docs/api.rst, by the current module above them."""
    out, module, in_summary = {}, None, False
    for line in API.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module, in_summary = m.group(1), False
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and (m := re.match(r"   ([A-Za-z_][\w.]*)\s*$", line)):
            out.setdefault(module, set()).add(m.group(1))
        elif in_summary and line and not line.startswith(" "):
            in_summary = False
    return out


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_name_is_in_the_api_reference(modname):
    names = set(public_names(modname))
    assert names, f"{modname} has no public names: the rule in tests/public_api.py is wrong"
    missing = names - listed().get(modname, set())
    assert not missing, f"docs/api.rst does not list {sorted(missing)} of {modname}"


def test_every_listed_name_exists():
    for modname, names in listed().items():
        module = importlib.import_module(modname)
        for name in names:
            assert hasattr(module, name), f"docs/api.rst lists {modname}.{name}, which does not exist"


def test_every_public_submodule_is_documented():
    import cosim
    for name in cosim.__all__:
        if inspect.ismodule(getattr(cosim, name)):
            assert f"cosim.{name}" in MODULES, f"cosim.{name} is public but not in tests/public_api.py's MODULES"
