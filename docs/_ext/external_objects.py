"""The objects of other projects that cosim's documentation links to (read by offline_inventories.py).

Per project: the base URL of its published documentation, and (dotted name, role, page relative to the base URL
with {name} for the dotted name). A role without a domain is a Python role; std:label and std:term entries give the
full page with its anchor and are not checked against the installed package. Every name is checked against the installed package at build time.
"""
NUMPY_GEN = "reference/generated/{name}.html"
SCIPY_GEN = "reference/generated/{name}.html"
PANDAS_API = "reference/api/{name}.html"
MPL_GEN = "api/_as_gen/{name}.html"

PROJECTS = {
    "python": {"module": "sys", "url": "https://docs.python.org/3/", "objects": [
        ("str", "class", "library/stdtypes.html"),
        ("int", "class", "library/functions.html"),
        ("float", "class", "library/functions.html"),
        ("bool", "class", "library/functions.html"),
        ("list", "class", "library/stdtypes.html"),
        ("tuple", "class", "library/stdtypes.html"),
        ("dict", "class", "library/stdtypes.html"),
        ("object", "class", "library/functions.html"),
        ("callable", "function", "library/functions.html"),
        ("None", "data", "library/constants.html"),
        ("True", "data", "library/constants.html"),
        ("False", "data", "library/constants.html"),
        ("sequence", "std:term", "glossary.html#term-sequence"),
        ("bltin-boolean-values", "std:label", "library/stdtypes.html#bltin-boolean-values"),
        ("KeyboardInterrupt", "exception", "library/exceptions.html"),
        ("ValueError", "exception", "library/exceptions.html"),
        ("TypeError", "exception", "library/exceptions.html"),
        ("KeyError", "exception", "library/exceptions.html"),
        ("RuntimeError", "exception", "library/exceptions.html"),
        ("ImportError", "exception", "library/exceptions.html"),
        ("ArithmeticError", "exception", "library/exceptions.html"),
        ("Exception", "exception", "library/exceptions.html"),
        ("pathlib.Path", "class", "library/pathlib.html"),
        ("concurrent.futures.ThreadPoolExecutor", "class", "library/concurrent.futures.html"),
        ("concurrent.futures.ProcessPoolExecutor", "class", "library/concurrent.futures.html"),
        ("sqlite3", "module", "library/sqlite3.html"),
        ("ctypes", "module", "library/ctypes.html"),
    ]},
    "numpy": {"module": "numpy", "url": "https://numpy.org/doc/stable/", "objects": [
        ("numpy.ndarray", "class", NUMPY_GEN),
        ("arrays.scalars", "std:label", "reference/arrays.scalars.html#arrays-scalars"),
        ("numpy.random.Generator", "class", "reference/random/generator.html"),
        ("numpy.logspace", "function", NUMPY_GEN),
        ("numpy.linspace", "function", NUMPY_GEN),
        ("numpy.interp", "function", NUMPY_GEN),
    ]},
    "scipy": {"module": "scipy", "url": "https://docs.scipy.org/doc/scipy/", "objects": [
        ("scipy.linalg.expm", "function", SCIPY_GEN),
        ("scipy.linalg.solve_continuous_are", "function", SCIPY_GEN),
        ("scipy.integrate.solve_ivp", "function", SCIPY_GEN),
        ("scipy.interpolate.CubicSpline", "class", SCIPY_GEN),
        ("scipy.fft.dct", "function", SCIPY_GEN),
        ("scipy.optimize.minimize_scalar", "function", SCIPY_GEN),
    ]},
    "matplotlib": {"module": "matplotlib", "url": "https://matplotlib.org/stable/", "objects": [
        ("matplotlib.axes.Axes", "class", MPL_GEN),
        ("matplotlib.figure.Figure", "class", "api/figure_api.html"),
        ("matplotlib.colors.Normalize", "class", MPL_GEN),
        ("matplotlib.colors.TwoSlopeNorm", "class", MPL_GEN),
        ("matplotlib.pyplot.subplots", "function", MPL_GEN),
    ]},
    "pandas": {"module": "pandas", "url": "https://pandas.pydata.org/docs/", "objects": [
        ("pandas.DataFrame", "class", PANDAS_API),
        ("pandas.Series", "class", PANDAS_API),
        ("pandas.read_csv", "function", PANDAS_API),
        ("pandas.DataFrame.to_csv", "method", PANDAS_API),
        ("pandas.DataFrame.to_parquet", "method", PANDAS_API),
    ]},
    "dask": {"module": "dask", "url": "https://docs.dask.org/en/stable/", "objects": [
        ("dask.delayed", "function", "delayed-api.html"),
    ]},
    "distributed": {"module": "distributed", "url": "https://distributed.dask.org/en/stable/", "objects": [
        ("distributed.Client", "class", "api.html"),
        ("distributed.LocalCluster", "class", "api.html"),
    ]},
}
