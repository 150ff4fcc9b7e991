"""Intersphinx without network: objects.inv files written at build time from external_objects.py.

The build machines reach PyPI and Debian's archive only, not numpy.org, docs.scipy.org, matplotlib.org,
pandas.pydata.org or docs.dask.org, so Sphinx cannot download their inventories. external_objects.py lists, per
project, the objects cosim's documentation refers to and the page of the project's documentation that describes
each; this extension checks that every listed object exists in the installed package (a renamed or removed name
stops the build) and writes an inventory in Sphinx's format (version 2) that points into the project's published
documentation. Links therefore resolve with -W on an offline machine; what they cannot check offline is that the
remote page still exists (the URL patterns are the projects' documented ones).

``COSIM_DOCS_ONLINE=1`` uses the projects' published inventories instead (for a machine with network access).
"""
import builtins
import importlib
import os
import zlib
from pathlib import Path

from external_objects import PROJECTS


def _resolve(dotted):
    """Import the object named by a dotted path (module prefix, then attributes); raise if it does not exist."""
    parts = dotted.split(".")
    if len(parts) == 1 and hasattr(builtins, dotted):
        return getattr(builtins, dotted)
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def write_inventory(path, project, version, entries):
    """Write an objects.inv (format version 2) for (name, role, uri) entries."""
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
              "# The remainder of this file is compressed using zlib.\n").encode()
    body = "".join(f"{name} {role} {-1 if role == 'std:label' else 1} {uri} {'-' if role != 'std:label' else name}\n" for name, role, uri in sorted(entries)).encode()
    path.write_bytes(header + zlib.compress(body))


def _config_inited(app, config):
    online = os.environ.get("COSIM_DOCS_ONLINE") == "1"
    folder = Path(app.outdir).parent / "inventories"
    folder.mkdir(parents=True, exist_ok=True)
    mapping = {}
    for key, spec in PROJECTS.items():
        if online:
            mapping[key] = (spec["url"], None)
            continue
        entries = []
        for name, role, page in spec["objects"]:
            if role.startswith("std:"):     # a label or glossary term: page carries its anchor
                entries.append((name, role, page))
                continue
            try:
                _resolve(name)
            except (ImportError, AttributeError) as exc:
                raise RuntimeError(f"docs/_ext/external_objects.py: {name} does not exist in the installed "
                                   f"{key} ({exc!r})") from exc
            entries.append((name, "py:" + role, page.replace("{name}", name) + "#" + name))
        inv = folder / f"{key}.inv"
        module = importlib.import_module(spec["module"])
        write_inventory(inv, key, getattr(module, "__version__", ""), entries)
        mapping[key] = (spec["url"], str(inv))
    config.intersphinx_mapping = mapping


def setup(app):
    app.connect("config-inited", _config_inited, priority=400)  # before intersphinx normalises the mapping
    return {"parallel_read_safe": True, "parallel_write_safe": True}
