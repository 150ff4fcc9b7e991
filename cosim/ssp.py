"""Import of an SSP system structure (System Structure and Parameterization 1.0/2.0, ``.ssp`` archive or an
unpacked directory): ``CoupledSystem.from_ssp(path)``. Feature by feature: docs/fmu.md "SSP".

The system of ``SystemStructure.ssd`` is flattened: every FMU component, also inside nested systems, becomes one
:class:`cosim.FMU` (named by its path, ``Sub.Comp`` -> ``Sub_Comp``); connections through system connectors are
followed to the component connectors at both ends, their linear transformations composed (factor as the gain,
offset as a constant added to the input, u = factor y + offset). Parameter bindings (inline ``ssv:ParameterValues`` or
an ``.ssv`` source, with an ``.ssm`` parameter mapping and a ``prefix``) on components and on systems give the FMUs'
start values; a value bound to a system's parameter connector flows along its connections (with their
transformations) to the component connectors. A binding on a higher level overrides one below it (the top-level
system has the last word); within one element, later bindings override earlier ones. ``implementation`` of a
component picks model exchange or co-simulation. ``DefaultExperiment`` is returned as the system's
``default_experiment``.

Everything else that changes the simulation is an error naming the element (signal dictionaries, nested SSP
packages, enumeration/boolean/integer mapping transformations on connections, String and Binary parameter values);
annotations and graphical information (geometry, graphical elements) do not change the simulation and are skipped.
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

_FMU_TYPE = "application/x-fmu-sharedlibrary"
_SKIPPED = {"Annotations", "ElementGeometry", "SystemGeometry", "GraphicalElements", "ConnectorGeometry",
            "ConnectionGeometry", "Units", "Enumerations", "ClassifiedProperties"}
_REAL = {"Real", "Float64", "Float32"}
_INT = {"Integer", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64"}


def _local(tag):
    return tag.rsplit("}", 1)[-1]


def _children(el, name):
    return [c for c in el if _local(c.tag) == name]


def _child(el, name):
    for c in el:
        if _local(c.tag) == name:
            return c
    return None


def _known(el, allowed, where):
    """Every child of ``el`` is one of ``allowed`` or skipped by design (annotations, geometry); else ValueError."""
    for c in el:
        tag = _local(c.tag)
        if tag not in allowed and tag not in _SKIPPED:
            raise ValueError(f"path: {where} holds a {tag} element, which cosim does not support")


def _items(el, name, where):
    """The children ``name`` of ``el`` (None: no children); any other child that is not skipped by design is an
    error naming it."""
    if el is None:
        return []
    _known(el, {name}, where)
    return [c for c in el if _local(c.tag) == name]


def _number(text, where):
    try:
        return float(text)
    except (TypeError, ValueError):
        raise ValueError(f"path: {where}: expected a number, got {text!r}") from None


def _transformation(el, where):
    """(factor, offset) of a connection's or mapping entry's transformation element (None: identity)."""
    factor, offset = 1.0, 0.0
    for c in el:
        tag = _local(c.tag)
        if tag == "LinearTransformation":
            factor = _number(c.get("factor", "1"), f"{where} LinearTransformation factor")
            offset = _number(c.get("offset", "0"), f"{where} LinearTransformation offset")
        elif tag.endswith("MappingTransformation"):
            raise ValueError(f"path: {where}: {tag} is not supported (only LinearTransformation)")
        elif tag not in _SKIPPED:
            raise ValueError(f"path: {where} holds a {tag} element, which cosim does not support")
    return factor, offset


def _values(pset, where):
    """[(name, value, unit)] of an ssv:ParameterSet element."""
    out = []
    for p in _items(_child(pset, "Parameters"), "Parameter", where):
        name = p.get("name")
        typed = [v for v in p if _local(v.tag) not in _SKIPPED]
        if not name or len(typed) != 1:
            raise ValueError(f"path: {where}: parameter {name!r} needs a name and one typed value")
        v = typed[0]
        kind, text = _local(v.tag), v.get("value")
        what = f"{where}: parameter {name!r}"
        if kind in _REAL:
            value = _number(text, what)
        elif kind in _INT:
            try:
                value = int(text)
            except (TypeError, ValueError):
                raise ValueError(f"path: {what}: expected an integer, got {text!r}") from None
        elif kind == "Boolean":
            if text not in ("true", "false", "1", "0"):
                raise ValueError(f"path: {what}: expected true or false, got {text!r}")
            value = text in ("true", "1")
        else:
            raise ValueError(f"path: {what} has type {kind}, which cosim does not support as a parameter value "
                             "(Real/Float, Integer/Int/UInt and Boolean are)")
        out.append((name, value, v.get("unit")))
    return out


class _Reader:
    """Flattens one SSD: components, connections and bindings by element path (a tuple of names)."""

    def __init__(self, root, path):
        self.root, self.path = root, path
        self.components = {}     # path -> Component element
        self.systems = {}        # path -> System element
        self.connectors = {}     # system path -> {connector name: kind}
        self.edges = {}          # destination node -> (source node, factor, offset, where)
        self.bindings = []       # (depth, order, element path, name relative to it, value, unit)

    # ---- structure ------------------------------------------------------------------------------------------
    def system(self, el, path):
        where = f"system {'.'.join(path) or el.get('name')!r}"
        _known(el, {"Connectors", "Elements", "Connections", "ParameterBindings", "SignalDictionaries"}, where)
        if _child(el, "SignalDictionaries") is not None:
            raise ValueError(f"path: {where}: signal dictionaries are not supported")
        self.systems[path] = el
        conns = _child(el, "Connectors")
        self.connectors[path] = {c.get("name"): c.get("kind") for c in (conns if conns is not None else [])
                                 if _local(c.tag) == "Connector"}
        elements = _child(el, "Elements")
        for e in (elements if elements is not None else []):
            tag, name = _local(e.tag), e.get("name")
            if tag in _SKIPPED:
                continue
            if not name:
                raise ValueError(f"path: {where} holds a {tag} without a name")
            if tag == "System":
                self.system(e, path + (name,))
            elif tag == "Component":
                ctype = e.get("type", _FMU_TYPE)
                if ctype != _FMU_TYPE:
                    raise ValueError(f"path: component {'.'.join(path + (name,))!r} of type {ctype!r} is not an "
                                     "FMU (nested SSP packages are not supported)")
                _known(e, {"Connectors", "ParameterBindings"}, f"component {'.'.join(path + (name,))!r}")
                self.components[path + (name,)] = e
                self.parameter_bindings(e, path + (name,))
            else:
                raise ValueError(f"path: {where} holds a {tag} element, which cosim does not support")
        self.parameter_bindings(el, path)
        for c in _items(_child(el, "Connections"), "Connection", where):
            se, sc, ee, ec = (c.get(k) for k in ("startElement", "startConnector", "endElement", "endConnector"))
            desc = f"connection {se or ''}.{sc} -> {ee or ''}.{ec} of {where}"
            src, dst = self.node(path, se, sc, desc), self.node(path, ee, ec, desc)
            factor, offset = _transformation(c, desc)
            if dst in self.edges:
                raise ValueError(f"path: {desc}: {'.'.join(dst[0] + (dst[1],))} has two sources")
            self.edges[dst] = (src, factor, offset, desc)

    def node(self, path, element, connector, desc):
        """(element path, connector name) of a connection end inside system ``path``."""
        if not connector:
            raise ValueError(f"path: {desc} lacks a connector name")
        if element is None:
            if connector not in self.connectors.get(path, {}):
                raise ValueError(f"path: {desc}: the system declares no connector {connector!r}")
            return path, connector
        full = path + (element,)
        if full not in self.components and full not in self.systems:
            raise ValueError(f"path: {desc} names an unknown element {element!r}")
        return full, connector

    # ---- parameters -----------------------------------------------------------------------------------------
    def parameter_bindings(self, el, path):
        where = f"{'component' if path in self.components else 'system'} {'.'.join(path)!r}"
        for b in _items(_child(el, "ParameterBindings"), "ParameterBinding", where):
            _known(b, {"ParameterValues", "ParameterMapping"}, f"parameter binding of {where}")
            btype = b.get("type", "application/x-ssp-parameter-set")
            if btype != "application/x-ssp-parameter-set":
                raise ValueError(f"path: parameter binding of {where} has type {btype!r}, not an SSV parameter set")
            values = _child(b, "ParameterValues")
            if values is not None and b.get("source"):
                raise ValueError(f"path: parameter binding of {where} has both a source and inline values")
            if values is not None:
                sets = [ps for ps in values if _local(ps.tag) == "ParameterSet"]
            elif b.get("source"):
                ssv = _archive.inside(self.root, b.get("source"), f"path: parameter binding source of {where}")
                if not ssv.is_file():
                    raise ValueError(f"path: parameter file {b.get('source')!r} of {where} is not in the SSP")
                sets = [_archive.parse_xml(ssv, f"parameter file {b.get('source')!r}")]
            else:
                raise ValueError(f"path: parameter binding of {where} has neither a source nor values")
            mapping = self.mapping(b, where)
            prefix = b.get("prefix", "")
            for ps in sets:
                for name, value, unit in _values(ps, f"parameter binding of {where}"):
                    for target, f, o in mapping.get(name, [(name, 1.0, 0.0)]):
                        if (f, o) != (1.0, 0.0):
                            if isinstance(value, bool):
                                raise ValueError(f"path: parameter mapping of {where}: a LinearTransformation of "
                                                 f"the Boolean {name!r}")
                            value = value * f + o
                        self.bindings.append((len(path), len(self.bindings), path, prefix + target, value, unit))

    def mapping(self, binding, where):
        """{source parameter name: [(target connector, factor, offset)]} of a binding's ParameterMapping."""
        pm = _child(binding, "ParameterMapping")
        if pm is None:
            return {}
        if pm.get("source"):
            ssm = _archive.inside(self.root, pm.get("source"), f"path: parameter mapping source of {where}")
            if not ssm.is_file():
                raise ValueError(f"path: parameter mapping {pm.get('source')!r} of {where} is not in the SSP")
            doc = _archive.parse_xml(ssm, f"parameter mapping {pm.get('source')!r}")
        else:
            doc = _child(pm, "ParameterMapping")
            if doc is None:
                raise ValueError(f"path: parameter mapping of {where} has neither a source nor an inline mapping")
        out = {}
        for entry in _items(doc, "MappingEntry", f"parameter mapping of {where}"):
            src, dst = entry.get("source"), entry.get("target")
            if not dst:
                raise ValueError(f"path: parameter mapping of {where}: a MappingEntry without a target")
            if not src:   # an unmapped template entry: maps nothing
                continue
            f, o = _transformation(entry, f"parameter mapping {src!r} -> {dst!r} of {where}")
            out.setdefault(src, []).append((dst, f, o))
        return out

    def resolve(self, path, name, where):
        """The node (element path, connector) that a binding name relative to element ``path`` sets."""
        if path in self.components:
            comp = path[-1]
            # a name given with the component's own name in front (common in exported .ssv files)
            return path, name[len(comp) + 1:] if name.startswith(comp + ".") else name
        if name in self.connectors.get(path, {}):
            return path, name
        head, dot, rest = name.partition(".")
        if dot and path + (head,) in self.components:
            return path + (head,), rest
        if dot and path + (head,) in self.systems:
            return self.resolve(path + (head,), rest, where)
        raise ValueError(f"path: parameter {name!r} bound at {where} names no connector of it or of its elements")

    def downstream(self, node):
        """The component connectors that a value at ``node`` reaches along the connections: [(node, f, o)]."""
        out = []
        for dst, (src, f, o, _) in self.edges.items():
            if src == node:
                if dst[0] in self.components:
                    out.append((dst, f, o))
                else:
                    out += [(d, f2 * f, f2 * o + o2) for d, f2, o2 in self.downstream(dst)]
        return out

    def start_values(self):
        """{component path: {connector: (value, unit)}} with the precedence rules of the module docstring."""
        starts = {p: {} for p in self.components}
        for depth, order, path, name, value, unit in sorted(self.bindings, key=lambda b: (-b[0], b[1])):
            where = f"{'component' if path in self.components else 'system'} {'.'.join(path) or 'root'!r}"
            node = self.resolve(path, name, where)
            targets = [(node, 1.0, 0.0)] if node[0] in self.components else self.downstream(node)
            if not targets:
                raise ValueError(f"path: parameter {name!r} bound at {where} reaches no component connector")
            for (comp, conn), f, o in targets:
                v = value if (f, o) == (1.0, 0.0) else value * f + o
                starts[comp][conn] = (v, unit)
        return starts

    def signals(self):
        """[(source node, destination node, factor, offset)]: every component input fed by a component output,
        through any chain of system connectors."""
        out = []
        for dst in self.edges:
            if dst[0] not in self.components:
                continue
            src, f, o, desc = self.edges[dst]
            seen = {dst}
            while src[0] not in self.components:
                if src in seen:
                    raise ValueError(f"path: {desc}: the connections form a loop through system connectors")
                seen.add(src)
                if src not in self.edges:   # an input of the top-level system, or a parameter connector
                    break
                src, f2, o2, desc = self.edges[src]
                f, o = f * f2, f * o2 + o
            if src[0] in self.components:
                out.append((src, dst, f, o))
            elif src[0] != () and self.connectors.get(src[0], {}).get(src[1]) not in ("parameter",
                                                                                      "calculatedParameter"):
                raise ValueError(f"path: {desc}: the connector {'.'.join(src[0] + (src[1],))} of a nested system "
                                 "has no source")
        return out


def _default_experiment(doc):
    de = _child(doc, "DefaultExperiment")
    if de is None:
        return {}
    _known(de, set(), "DefaultExperiment")
    out = {}
    for attr, key in (("startTime", "start_time"), ("stopTime", "stop_time")):
        if de.get(attr) is not None:
            out[key] = _number(de.get(attr), f"DefaultExperiment {attr}")
    return out


def read_ssp(path, *, kind=None, max_unpacked=None, **fmu_options):
    """The parts of an SSP system (see the module docstring) for :meth:`cosim.CoupledSystem.from_ssp`:
    ``(subsystems, connections, offsets, default_experiment)`` with the FMU components as :class:`cosim.FMU`
    subsystems, the connections as (source, destination, gain) triples of signal names, the offsets of linear
    transformations as (value, destination) pairs and the DefaultExperiment as a dict (``start_time``,
    ``stop_time``). ``kind`` ("cs", "me" or None: the component's ``implementation``, else the FMU's default) is
    passed to every FMU, as are ``fmu_options`` (``tolerance``, ``logging_on``). ``max_unpacked``: limit of the
    unpacked size of the SSP and of each FMU in it, in bytes (default 1 GiB). Every ``source`` must name a file
    inside the SSP (docs/fmu.md "Containment")."""

    require("fmu", "cosim.CoupledSystem.from_ssp")
    max_unpacked = _archive.check_limit(max_unpacked)
    if kind is not None and kind not in ("cs", "me"):
        raise ValueError(f"kind: must be 'cs', 'me' or None, got {kind!r}")
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
        _known(doc, {"System", "DefaultExperiment"}, "SystemStructure.ssd")
        system = _child(doc, "System")
        if system is None:
            raise ValueError("path: SystemStructure.ssd has no System")
        reader = _Reader(root, path)
        reader.system(system, ())
        if not reader.components:
            raise ValueError("path: the SSP system has no FMU components")
        starts = reader.start_values()
        fmus = {}
        for cpath, comp in reader.components.items():
            where = f"component {'.'.join(cpath)!r}"
            impl = comp.get("implementation", "any")
            if impl not in ("any", "ModelExchange", "CoSimulation"):
                raise ValueError(f"path: {where}: implementation {impl!r} is not supported (ModelExchange, "
                                 "CoSimulation or any)")
            ckind = kind or {"ModelExchange": "me", "CoSimulation": "cs"}.get(impl)
            source = _archive.inside(root, comp.get("source", ""), f"path: source of {where}")
            values = starts[cpath]
            name = _check.identifier(label(".".join(cpath)))
            fmu = FMU(source, name=name, kind=ckind, start_values={k: v for k, (v, _) in values.items()},
                      max_unpacked=max_unpacked, **fmu_options)
            _check_units(fmu, values, where)
            fmus[cpath] = fmu
        conns, offsets = [], []
        for (sp, sc), (dp, dc), f, o in reader.signals():
            dst = f"{fmus[dp].name}.{label(dc)}"
            conns.append((f"{fmus[sp].name}.{label(sc)}", dst, f))
            if o != 0.0:
                offsets.append((o, dst))
        return list(fmus.values()), conns, offsets, _default_experiment(doc)
    finally:
        # the FMUs were unpacked again by cosim.FMU; the SSP's own directory is no longer needed
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _check_units(fmu, values, where):
    """A bound value whose ``unit`` differs from its variable's declared unit is an error (no conversion)."""
    by_name = {v.name: v for v in fmu.model_description.modelVariables}
    for name, (_, unit) in values.items():
        var = by_name.get(name)
        if unit is None or var is None:
            continue
        declared = var.unit or (var.declaredType.unit if var.declaredType is not None else None)
        if declared is not None and declared != unit:
            raise ValueError(f"path: {where}: parameter {name!r} is given in {unit!r}, the FMU declares {declared!r} "
                             "(cosim does not convert units)")
