"""The Python layer flows one way (issue 24 part 4): config objects -> spec -> simulate -> result -> metrics /
analysis / plot. Every import in cosim/ (top level and inside functions, relative and absolute) is an edge; the
graph has no cycle, and no module imports another module's private name (what is shared is public in the module
that owns it, e.g. :mod:`cosim._check`)."""
import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parent.parent / "cosim"


def _modules():
    """{dotted module name: path} of every module of the package (extension modules included)."""
    mods = {}
    for f in PKG.rglob("*"):
        if f.suffix not in (".py", ".so", ".pyd") or "__pycache__" in f.parts:
            continue
        parts = list(f.relative_to(PKG.parent).parts)
        parts[-1] = parts[-1].split(".")[0]
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = f
    return mods


def _imports(mods):
    """[(importing module, imported module, name or None, line)] for every import of a cosim module."""
    out = []
    for mod, path in mods.items():
        if path.suffix != ".py":
            continue
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                out += [(mod, a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "cosim"]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "cosim":
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    out.append((mod, sub, None, node.lineno) if sub in mods else (mod, target, a.name, node.lineno))
    return out


def test_import_walk_sees_nested_and_relative_imports():
    edges = {(a, b) for a, b, _, _ in _imports(_modules())}
    assert ("cosim", "cosim.simulate") in edges            # relative, top level
    assert ("cosim.cli", "cosim.doe.config") in edges       # relative, inside a function, two dots
    assert ("cosim.cli", "cosim") in edges                  # absolute


def test_no_import_cycle():
    mods = _modules()
    graph = {m: set() for m in mods}
    for a, b, _, _ in _imports(mods):
        assert b in mods, f"{a} imports {b}, which is no module of the package"
        if b != a:
            graph[a].add(b)
    state, cycles = {}, []

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "import cycles in cosim/:\n" + "\n".join(cycles)


def test_no_private_name_imported_across_modules():
    private = [f"{a}:{line} imports {name} from {b}" for a, b, name, line in _imports(_modules())
               if name is not None and name.startswith("_") and not name.startswith("__")]
    assert not private, "private names used outside their module:\n" + "\n".join(private)
