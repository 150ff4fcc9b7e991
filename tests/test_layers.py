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
    assert "cs_composite_new" not in engine and "cs_network_init" not in engine
