"""The C core's folders call one way (DESIGN.md §1): no include cycle between folders, and the master's algorithm
sees units, couplings, schemes, controllers and observers only, never a model or an integrator."""
import collections
import pathlib
import re

CSRC = pathlib.Path(__file__).resolve().parent.parent / "csrc"


def folder_graph():
    g = collections.defaultdict(set)
    for f in CSRC.rglob("*.[ch]"):
        src = f.parent.relative_to(CSRC).as_posix()
        for inc in re.findall(r'#include "([^"]+)"', f.read_text()):
            dst = pathlib.PurePosixPath(inc).parent.as_posix()
            if dst != src:
                g[src].add(dst)
    return g


def test_no_include_cycle_between_folders():
    g = folder_graph()
    state = {}

    def visit(n, path):
        state[n] = "open"
        for m in g[n]:
            assert state.get(m) != "open", f"include cycle: {' -> '.join(path + [m])}"
            if m not in state:
                visit(m, path + [m])
        state[n] = "done"

    for n in list(g):
        if n not in state:
            visit(n, [n])


def test_algorithm_never_touches_models_or_integrators():
    for name in ("algorithm.c", "algorithm.h", "observer.h", "recorder.c", "hooks.c"):
        text = (CSRC / "master" / name).read_text()
        assert not re.search(r'#include "(models|integrators)/', text), name
    for f in (CSRC / "schemes").glob("*.[ch]"):
        assert not re.search(r'#include "(models|integrators)/', f.read_text()), f.name


def test_bindings_hold_no_numerics():
    """csrc/py converts arguments: the monolithic composite and the run assembly live in master/setup.c."""
    engine = (CSRC / "py" / "engine.c").read_text()
    assert "cs_composite_create" not in engine and "cs_network_init" not in engine


# ------------------------------------------------------------------------------------------------------------------
# DESIGN.md §1, folder by folder: which folders each folder of csrc/ may include. Calls go one way: master -> schemes
# -> (coupling, units) -> integrators -> models; control decides from what the schemes and couplings report; analysis
# reads the same coupling, scheme and network definitions as the engine; py/ only binds (and nothing includes it);
# network, input, sysid, fmi, parallel and linalg are libraries below the objects that use them; "." is csrc/ itself
# (common.h, kind.h, and unit_access.h: the unit ops couplings and controllers may call). Written once; an include
# that is not in it fails, unless KNOWN_VIOLATIONS lists that very include.
_BASE = {"linalg", "."}
ALLOWED = {
    ".": set(),
    "linalg": {"."},
    "parallel": {"."},
    "fmi": {"."},
    "network": _BASE,
    "input": _BASE,
    "sysid": _BASE,
    "models": _BASE | {"network", "fmi"},
    "integrators": _BASE | {"models", "input"},
    "units": _BASE | {"integrators", "models", "fmi", "input"},
    "coupling": _BASE | {"network", "input", "sysid"},
    "control": _BASE | {"coupling", "network", "input", "parallel"},
    "schemes": _BASE | {"coupling", "units", "network", "input", "parallel"},
    "analysis": _BASE | {"coupling", "schemes", "network", "input"},
    "master": _BASE | {"schemes", "control", "coupling", "units", "network", "input", "parallel"},
    "py": {"master", "schemes", "control", "coupling", "units", "integrators", "models", "network", "input", "sysid",
           "analysis", "fmi", "parallel", "linalg", "."},
}

# Includes of today's tree that break the rules above (file, included header): each is a known violation to remove,
# not a rule. The test fails when one of them disappears too, so that the list stays exact.
KNOWN_VIOLATIONS: set = set()


def _include_folder(src_file, inc):
    """The csrc folder an ``#include "inc"`` of ``src_file`` resolves to (the including file's folder first, then
    csrc/, as the compiler does with -Icsrc), or None for a header from outside csrc."""
    here = src_file.parent
    if (here / inc).is_file():
        return here.relative_to(CSRC).as_posix()
    if (CSRC / inc).is_file():
        return pathlib.PurePosixPath(inc).parent.as_posix()
    return None


def _includes():
    """[(file relative to csrc, included header as written, its folder, the file's folder)] for every #include."""
    out = []
    for f in sorted(CSRC.rglob("*.[ch]")):
        src = f.parent.relative_to(CSRC).as_posix()
        for inc in re.findall(r'^\s*#\s*include\s*"([^"]+)"', f.read_text(), re.M):
            out.append((f.relative_to(CSRC).as_posix(), inc, _include_folder(f, inc), src))
    return out


def test_every_csrc_folder_has_a_rule_and_the_rules_form_no_cycle():
    folders = {p.relative_to(CSRC).as_posix() for p in CSRC.rglob("*") if p.is_dir()} | {"."}
    assert folders == set(ALLOWED), f"folders without a rule: {folders - set(ALLOWED)}; rules without a folder: " \
                                    f"{set(ALLOWED) - folders}"
    assert all(dst in ALLOWED for deps in ALLOWED.values() for dst in deps)
    assert not any("py" in deps for deps in ALLOWED.values()), "nothing may include the bindings"
    order = []
    while len(order) < len(ALLOWED):
        ready = [n for n in ALLOWED if n not in order and ALLOWED[n] <= set(order)]
        assert ready, f"the allowed dependencies form a cycle among {set(ALLOWED) - set(order)}"
        order += ready


def test_includes_follow_the_folder_rules():
    unresolved, broken, seen = [], [], set()
    for path, inc, dst, src in _includes():
        if dst is None:
            unresolved.append(f"{path}: {inc}")
        elif dst != src and dst not in ALLOWED[src]:
            if (path, inc) in KNOWN_VIOLATIONS:
                seen.add((path, inc))
            else:
                broken.append(f"{path} includes {inc} ({src} -> {dst})")
    assert not unresolved, f"includes that resolve to no file under csrc/: {unresolved}"
    assert not broken, "includes against DESIGN.md §1 (tests/test_layers.py ALLOWED):\n" + "\n".join(broken)
    assert seen == KNOWN_VIOLATIONS, f"known violations that are gone (remove them from the list): " \
                                     f"{sorted(KNOWN_VIOLATIONS - seen)}"
