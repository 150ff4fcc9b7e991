"""What counts as cosim's public API (read by tests/test_api_reference.py and by nothing else at run time).

A module's public names are its ``__all__`` where it has one, else the functions and classes it defines itself
(``obj.__module__`` is the module, or one of its submodules for a package) without a leading underscore. Submodules named in ``cosim.__all__`` are
documented as modules of their own."""
import importlib
import inspect

MODULES = ["cosim", "cosim.models", "cosim.analysis", "cosim.plot", "cosim.metrics", "cosim.sysid", "cosim.control",
           "cosim.defaults", "cosim.doe", "cosim.doe.plots"]


def public_names(modname):
    module = importlib.import_module(modname)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
                 and (v.__module__ == modname
                      or (hasattr(module, "__path__") and v.__module__.startswith(modname + ".")))]
    return [n for n in names if not inspect.ismodule(getattr(module, n))]
