"""Sphinx configuration of the cosim documentation (`make docs` builds it into docs/_build/html)."""
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))          # the checkout's cosim (with its built extension) wins
sys.path.insert(0, str(DOCS / "_ext"))

import cosim  # noqa: E402

project = "cosim"
author = "the cosim authors"
copyright = "2026, the cosim authors"
release = version = cosim.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",   # MathJax served from the site itself: no CDN (offline machines, CI)
    "sphinx.ext.doctest",
    "matplotlib.sphinxext.plot_directive",
    "sphinx_gallery.gen_gallery",
    "offline_inventories",
    "paper_results",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.codeobj.json", "_generated/*.md"]
templates_path = ["_templates"]

# Every cross-reference must resolve (-W turns a missing one into an error).
nitpicky = True
# Words of numpydoc type fields that are prose, not objects ("array_like", "optional", "callable", ...) are not
# links; the types that are objects get links through numpydoc_xref_aliases (below).
nitpick_ignore_regex = []

# --- MyST: the .md pages (also read on GitHub) ---------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# --- autodoc / autosummary / numpydoc -----------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": False}
autodoc_typehints = "none"              # the numpydoc "Parameters" sections carry the types
numpydoc_show_class_members = False     # autosummary lists them
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"            # a word of a type field links only when it is an alias below
numpydoc_xref_aliases = {
    "ndarray": "numpy.ndarray", "array": "numpy.ndarray", "DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series", "Axes": "matplotlib.axes.Axes", "Figure": "matplotlib.figure.Figure",
    "Result": "cosim.Result", "CoupledSystem": "cosim.CoupledSystem", "Subsystem": "cosim.Subsystem",
    "LTI": "cosim.LTI", "ODE": "cosim.ODE", "CModel": "cosim.CModel", "FMU": "cosim.FMU",
    "StepControl": "cosim.StepControl", "Study": "cosim.doe.Study", "Range": "cosim.doe.Range",
}

# --- intersphinx: offline inventories (docs/_ext/offline_inventories.py) -------------------------------------------
# This machine and CI reach PyPI and Debian only, not the projects' documentation servers. The inventories are
# written at build time from docs/_ext/external_objects.py (names checked against the installed packages); with
# COSIM_DOCS_ONLINE=1 the projects' published inventories are fetched instead.
intersphinx_mapping = {}  # filled by offline_inventories at config-inited
intersphinx_timeout = 10

# --- sphinx-gallery: the examples/ folder -------------------------------------------------------------------------
# Only the examples fast enough for `make docs` run (GALLERY_RUN); the others are shown with their code, and the
# gallery page says how to run them. COSIM_DOCS_GALLERY=none builds without executing any.
GALLERY_RUN = ["quickstart.py", "custom_system.py", "first_cosimulation.py"]
_run = os.environ.get("COSIM_DOCS_GALLERY", "fast")
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/(" + "|".join(n.replace(".", r"\.") for n in GALLERY_RUN) + ")$" if _run != "none"
                        else r"^$",
    "ignore_pattern": r"(__init__|scenario_model)\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
}

# --- plot directive (figures of the narrative pages, made by cosim at build time) ---------------------------------
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.figsize": (6.4, 3.6)}
# Some plots show runs at the stability limit on purpose (concepts.md: ZOH at H = 2 ms, rho = 1.0004): their
# CouplingInstabilityWarning is the point of the page, not a fault of the build, whose log must show real ones
plot_pre_code = ("import numpy as np\nfrom matplotlib import pyplot as plt\nimport warnings\nimport cosim\n"
                 "warnings.simplefilter('ignore', cosim.CouplingInstabilityWarning)\n")

# --- HTML ---------------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"cosim {release}"
html_static_path = ["_static"]
html_css_files = ["cosim.css"]
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "secondary_sidebar_items": ["page-toc"],
    "show_prev_next": True,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "getting_started": [], "changelog": []}
html_show_sourcelink = False
html_favicon = "_static/favicon.svg"
html_context = {"default_mode": "light"}  # an explicit mode: the theme logs a console error for an empty one


# --- docstrings: |x| is an absolute value in cosim's docstrings, not a reST substitution --------------------------
import re  # noqa: E402

_ABS = re.compile(r"(?<![\\|`])\|(?=\S)([^|`\n]*?\S)\|(?![_|])")


def _absolute_values(app, what, name, obj, options, lines):
    """Escape |x| (a norm or absolute value in the prose) so that reST does not read it as a substitution."""
    for i, line in enumerate(lines):
        if "|" in line and not line.lstrip().startswith(("+", "| ")):
            lines[i] = _ABS.sub(r"\\|\1\\|", line)



# Internal modules, base classes and module constants that docstrings name but that are not public API (see
# tests/public_api.py): their references stay plain text instead of failing the build. Keep this list short; a
# public name never belongs here.
nitpick_ignore = [
    ("py:mod", m) for m in ("cosim", "cosim.timing", "cosim.stability", "cosim.stability_theory",
                            "cosim.stability_region", "cosim.ssp", "cosim.doe.responses", "cosim.doe.identity",
                            "cosim.doe.designs")
] + [
    ("py:class", c) for c in ("cosim.coupling.Coupling", "cosim.solvers.Solver", "cosim.solvers._FixedStep",
                              "cosim.approximations.Approximation", "cosim.schemes.IterativeScheme", "ErrorSummary",
                              "CombinedSystem")
] + [
    ("py:data", d) for d in ("cosim.defaults.DIVERGENCE_GROWTH", "cosim.defaults.STABILITY_WINDOW", "UNITS",
                             "cosim.doe.designs.MAX_RUNS", "V1_PULSES", "PRESETS", "LABELS", "GROWING")
] + [
    ("py:func", f) for f in ("bohl_exponent", "stability_region_area", "loaded_parameters",
                             "cosim.stability_theory.boundedness", "cosim.stability_theory.bohl_exponent")
] + [("py:attr", a) for a in ("status", "order_control", "sweep", "step_sizes")]


_SECTIONS = {"Parameters", "Other Parameters", "Attributes", "Returns", "Yields", "Raises", "Receives"}
_ITEM = re.compile(r"^(\s*)([\w*][\w, *.]*?) : (.+)$")
_PROSE = re.compile(r"\b(the|a|an|is|are|to|from|for|with|when|if|as|by|per|of its|instead)\b")


def _prose_parameters(app, what, name, obj, options, lines):
    """Many docstrings write ``name : what it is`` on one line in their Parameters sections; numpydoc would read
    the prose as the type. Move such prose to the description (runs before numpydoc)."""
    section, out, i = None, [], 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and set(nxt.strip()) == {"-"} and len(nxt.strip()) == len(line.strip()):
            section = line.strip()
        elif section in _SECTIONS and (m := _ITEM.match(line)):
            indent, item, rest = m.groups()
            if len(rest) > 50 or (len(rest) > 20 and _PROSE.search(rest)):
                out += [indent + item, indent + "    " + rest]
                i += 1
                continue
        out.append(line)
        i += 1
    lines[:] = out


def setup(app):
    app.connect("autodoc-process-docstring", _prose_parameters, priority=400)  # before numpydoc (500)
    app.connect("autodoc-process-docstring", _absolute_values)
