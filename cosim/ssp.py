"""Import of an SSP system structure (System Structure and Parameterization 1.0/2.0, ``.ssp`` archive or an
unpacked directory): ``CoupledSystem.from_ssp(path)``.

Read from ``SystemStructure.ssd``: the components of the top-level system that are FMUs (``source`` inside the
archive), the connections between their connectors (``connect(startElement.startConnector,
endElement.endConnector)``; a linear transformation gives the gain, an offset is not supported) and the parameter
bindings of each component (inline ``ssv:ParameterValues`` or an ``.ssv`` file in the archive; values of type Real,
Integer and Boolean, by parameter name, optionally prefixed ``<component>.``) as the FMUs' start values.
Not supported (ValueError naming the element): nested systems, connections to the system's own connectors,
signal dictionaries, parameter mappings (``.ssm``).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import tempfile
import zipfile

from . import _archive, _check
from ._extras import require
from .fmu import FMU, label


def _local(tag):
    return tag.rsplit("}", 1)[-1]


def _children(el, name):
    return [c for c in el if _local(c.tag) == name]


def _child(el, name):
    for c in el:
        if _local(c.tag) == name:
            return c
    return None


def _parameters(el, component):
    """{name: value} of an ssv:ParameterSet element."""
    out = {}
    params = _child(el, "Parameters")
    for p in (params if params is not None else []):
        if _local(p.tag) != "Parameter":
            continue
        name = p.get("name")
        if name and name.startswith(component + "."):
            name = name[len(component) + 1:]
        for v in p:
            kind, value = _local(v.tag), v.get("value")
            if kind == "Real":
                out[name] = float(value)
            elif kind in ("Integer", "Enumeration"):
                out[name] = int(value)
            elif kind == "Boolean":
                out[name] = value.strip().lower() in ("true", "1")
            else:
                raise ValueError(f"path: parameter {name!r} of {component!r} has unsupported type {kind}")
    return out


def read_ssp(path, *, kind=None, max_unpacked=None, **fmu_options):
    """The parts of an SSP system (see the module docstring): its FMU components as :class:`cosim.FMU` subsystems and
    its connections as (source, destination, gain) triples of signal names, for
    :meth:`cosim.CoupledSystem.from_ssp` to assemble. ``kind`` ("cs", "me" or None) is passed to every FMU, as are
    ``fmu_options`` (``tolerance``, ``logging_on``). ``max_unpacked``: limit of the unpacked size of the SSP and of
    each FMU in it, in bytes (default 1 GiB). Every ``source`` must name a file inside the SSP (docs/fmu.md
    "Containment")."""

    require("fmu", "cosim.CoupledSystem.from_ssp")
    max_unpacked = _archive.check_limit(max_unpacked)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a file or directory name, got {type(path).__name__}")
    path = pathlib.Path(path)
    tmp = None
    if path.is_dir():
        root = path
    elif path.is_file():
        if not zipfile.is_zipfile(path):
            raise ValueError(f"path: {str(path)!r} is not an SSP archive (not a zip archive)")
        tmp = tempfile.mkdtemp(prefix="cosim_ssp_")
        try:
            _archive.extract(path, tmp, max_unpacked, "SSP")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        root = pathlib.Path(tmp)
    else:
        raise ValueError(f"path: no such file or directory {str(path)!r}")
    try:
        ssd = root / "SystemStructure.ssd"
        if not ssd.is_file():
            raise ValueError(f"path: {str(path)!r} has no SystemStructure.ssd")
        doc = _archive.parse_xml(ssd, "SystemStructure.ssd")
        system = _child(doc, "System")
        if system is None:
            raise ValueError("path: SystemStructure.ssd has no System")
        elements = _child(system, "Elements")
        subsystems, names = [], {}
        for comp in (elements if elements is not None else []):
            tag = _local(comp.tag)
            if tag == "System":
                raise ValueError(f"path: nested system {comp.get('name')!r} is not supported")
            if tag != "Component":
                continue
            cname = comp.get("name")
            ctype = comp.get("type", "application/x-fmu-sharedlibrary")
            if ctype != "application/x-fmu-sharedlibrary":
                raise ValueError(f"path: component {cname!r} of type {ctype!r} is not an FMU")
            fmu_path = _archive.inside(root, comp.get("source", ""), f"path: source of component {cname!r}")
            starts = {}
            bindings = _child(comp, "ParameterBindings")
            for b in (bindings if bindings is not None else []):
                if _local(b.tag) != "ParameterBinding":
                    continue
                if _child(b, "ParameterMapping") is not None:
                    raise ValueError(f"path: parameter mappings (component {cname!r}) are not supported")
                values = _child(b, "ParameterValues")
                if values is not None:
                    for ps in values:
                        if _local(ps.tag) == "ParameterSet":
                            starts.update(_parameters(ps, cname))
                elif b.get("source"):
                    ssv = _archive.inside(root, b.get("source"), f"path: parameter binding source of {cname!r}")
                    if not ssv.is_file():
                        raise ValueError(f"path: parameter file {b.get('source')!r} of {cname!r} is not in the SSP")
                    starts.update(_parameters(_archive.parse_xml(ssv, f"parameter file {b.get('source')!r}"),
                                              cname))
            name = _check.identifier(label(cname))
            fmu = FMU(fmu_path, name=name, kind=kind, start_values=starts, max_unpacked=max_unpacked, **fmu_options)
            names[cname] = fmu
            subsystems.append(fmu)
        if not subsystems:
            raise ValueError("path: the SSP system has no FMU components")
        conns = []
        connections = _child(system, "Connections")
        for c in (connections if connections is not None else []):
            if _local(c.tag) != "Connection":
                continue
            se, sc, ee, ec = (c.get(k) for k in ("startElement", "startConnector", "endElement", "endConnector"))
            if se is None or ee is None:
                raise ValueError(f"path: connection {sc!r} -> {ec!r} to the system's own connectors is not "
                                 "supported")
            if se not in names or ee not in names:
                raise ValueError(f"path: connection {se}.{sc} -> {ee}.{ec} names an unknown component")
            gain = 1.0
            lin = _child(c, "LinearTransformation")
            if lin is not None:
                if float(lin.get("offset", 0.0)) != 0.0:
                    raise ValueError(f"path: connection {se}.{sc} -> {ee}.{ec}: offsets are not supported")
                gain = float(lin.get("factor", 1.0))
            conns.append((f"{names[se].name}.{label(sc)}", f"{names[ee].name}.{label(ec)}", gain))
        return subsystems, conns
    finally:
        # the FMUs were unpacked again by cosim.FMU; the SSP's own directory is no longer needed
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
