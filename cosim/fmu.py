"""FMU subsystems: Functional Mock-up Units (FMI 2.0 and 3.0) as units of a :class:`cosim.CoupledSystem`.

A co-simulation FMU is a black-box unit (DESIGN.md §2 "Unit"): cosim sets its inputs at T_N, calls ``doStep`` over
[T_N, T_{N+1}] and reads its outputs; a model-exchange FMU (FMI 2.0) is a model x' = f(t, x, u), y = g(t, x, u)
integrated by cosim's own integrators (CVODE, RK4, Euler), its continuous states in cosim's state vector. The
binary is loaded and called in C (csrc/fmi, csrc/units/fmu_unit.c); ``modelDescription.xml`` is read with FMPy.

Supported, feature by feature: docs/fmu.md. In short:

* inputs: u(T_N) held over the step (ZOH); where a co-simulation FMU can interpolate inputs (FMI 2
  ``canInterpolateInputs``) also the first derivative of the coupling polynomial at T_N
  (``fmi2SetRealInputDerivatives``), so EXTRIPOL/Lagrange inputs reach the FMU as a ramp;
* rollback (rejected steps, dense output) through ``fmiGet/SetFMUstate`` where ``canGetAndSetFMUstate``; a run
  that needs a rollback the FMU cannot give fails with a :class:`cosim.SolverError` saying so;
* output derivatives (``maxOutputDerivativeOrder`` >= 1, Hermite) and directional derivatives as ∂y/∂u;
* FMI 3 co-simulation inputs declared ``intermediateUpdate="true"``: set to the coupling polynomial at the FMU's
  intermediate update times inside ``fmi3DoStep``;
* model exchange (FMI 2.0 and 3.0): time events (the step is split at the event time) and state events (sign change
  of an event indicator, located by root finding on the integrator's solution); both run the event iteration and
  restart the integrator;
* inputs and outputs of every numeric type and Boolean (doubles in cosim; cosim/_fmi_types.py), FMI 3 arrays as one
  signal per element (``y[0]``, ``y[1]``, ...); start values of those, of Strings and of FMI 3 Binaries (by name or
  value reference), also changed between runs (:meth:`FMU.set`); structural parameters stay fixed;
* ``cosim.simulate`` takes the times not given from the FMU's DefaultExperiment (cosim/_experiment.py); a
  model-exchange FMU starts from its initialisation at ``t_start``; :class:`cosim.Stepper` steps an FMU by hand
  and saves/restores its FMU state;
* an FMU's request to terminate ends the run normally (``Result.TERMINATED``); the FMI call sequence stays legal
  on error paths; model exchange: discrete inputs in event mode, an events-per-step cap (Zeno), CVODE keeps its
  history without inputs;
* containment of everything named inside the archive, an unpacked-size limit, defused XML (cosim/_archive.py);
  archives unpacked once per process and content (cosim/_fmu_cache.py);
* the FMU's log messages go to the Python logger ``cosim.fmu.<name>`` after each run (OK/Warning/Discard/Error/
  Fatal -> INFO/WARNING/WARNING/ERROR/CRITICAL).
"""
from __future__ import annotations

import logging
import os
import pathlib
import re
import shutil
import tempfile
import weakref
import zipfile

import numpy as np

from . import _archive, _check, _core, _fmi_types, _fmu_cache
from ._extras import require
from .subsystem import Subsystem

KINDS = dict(_core.codes["fmu_kind"])
_STATUS = {0: "OK", 1: "Warning", 2: "Discard", 3: "Error", 4: "Fatal"}
_LEVELS = {0: logging.INFO, 1: logging.WARNING, 2: logging.WARNING, 3: logging.ERROR, 4: logging.CRITICAL}


def label(name):
    """An FMU (or SSP) variable name as a cosim signal label (identifier-like): other characters become '_'."""
    s = re.sub(r"\W", "_", name)
    return s if re.match(r"[A-Za-z_]", s) else "_" + s


def _intermediate_update_vrs(root):
    """Value references of the FMI 3 variables declared intermediateUpdate="true" (``root``: the parsed
    modelDescription.xml)."""
    vars_ = root.find("ModelVariables")
    out = set()
    for v in (vars_ if vars_ is not None else []):
        if v.get("intermediateUpdate") in ("true", "1") and v.get("valueReference") is not None:
            out.add(int(v.get("valueReference")))
    return out


def _platform_dirs():
    import fmpy
    return [fmpy.platform, fmpy.platform_tuple]


class FMU(Subsystem):
    """A Functional Mock-up Unit as a subsystem.

    Parameters
    ----------
    path : the ``.fmu`` file (a zip archive with ``modelDescription.xml`` and a binary for this platform).
    name : subsystem name (default: the FMU's model name, made identifier-like).
    kind : "cs" (co-simulation: the FMU's own solver), "me" (model exchange: cosim's integrator) or None
        (co-simulation where the FMU offers it, else model exchange).
    start_values : dict ``{variable name or value reference: value}`` set before initialisation (parameters, start
        values of states and inputs); numeric, Boolean and String variables, FMI 3 Binary variables (bytes) and
        arrays (all elements, row-major) (:meth:`set` changes one later); structural parameters cannot change.
    inputs, outputs : the FMU variables used as the subsystem's inputs u and outputs y (names or value references;
        default: every numeric or Boolean variable with causality input / output, in the order of the model
        description; the others are listed in ``skipped_variables``). An FMI 3 array is one signal per element,
        ``name[0]`` .. ``name[m-1]``.
        Their signal names are the variable names with characters other than letters, digits and '_' replaced by
        '_' (``"S1.x"``, ``res["S2.F"]``).
    tolerance : relative tolerance passed to the FMU's own solver (co-simulation), or None.
    logging_on : ask the FMU for debug logging (``loggingOn``); messages of status Warning and worse are logged
        regardless, by most FMUs.
    max_events_per_step : model exchange: events in one macro step after which the step fails with a
        :class:`cosim.SolverError` (carrying the result so far): events that accumulate (a Zeno model) would
        otherwise split the step forever.
    log_callback : ``f(status, instance, category, message)`` called for every message of the FMU as it arrives
        (status "OK", "Warning", "Discard", "Error" or "Fatal"), from the thread that called the FMU, instead of
        the Python logger after the run; an exception in it is reported as unraisable (it cannot fail the FMU's
        call).
    max_unpacked : limit of the unpacked size of the archive in bytes (default ``cosim._archive.MAX_UNPACKED``,
        1 GiB); a larger archive is refused before anything is written (docs/fmu.md "Containment").

    The archive is unpacked once per process and content into a temporary directory (shared by every FMU object
    of the same file content, removed at exit; cosim/_fmu_cache.py). Attributes: ``fmi_version`` (2 or 3),
    ``kind``, ``model_description`` (FMPy's object), ``can_rollback``, ``nx, nu, ny``, ``feedthrough``, ``x0``
    (model exchange: the FMU's initial states), ``units`` (the units the model description declares for the
    inputs, outputs and states, keyed ``"u[j]"``, ``"y[j]"``, ``"x[i]"``; see :class:`cosim.Subsystem`).
    """

    def __init__(self, path, name=None, kind=None, start_values=None, inputs=None, outputs=None, *,
                 tolerance=None, logging_on=False, max_unpacked=None, max_events_per_step=1000, log_callback=None):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path: expected a file name, got {type(path).__name__}")
        path = pathlib.Path(path)
        if not path.is_file():
            raise ValueError(f"path: no such file {str(path)!r}")
        if not zipfile.is_zipfile(path):
            raise ValueError(f"path: {str(path)!r} is not an FMU (not a zip archive)")
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind: must be 'cs', 'me' or None, got {kind!r}")
        if start_values is not None and not isinstance(start_values, dict):
            raise TypeError(f"start_values: expected a dict {{name: value}}, got {type(start_values).__name__}")
        if not isinstance(logging_on, bool):
            raise TypeError(f"logging_on: expected True or False, got {logging_on!r}")
        if tolerance is not None:
            if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (
                    np.isfinite(tolerance) and tolerance > 0):
                raise ValueError(f"tolerance: expected a positive finite number, got {tolerance!r}")
        max_unpacked = _archive.check_limit(max_unpacked)
        self._max_events = _check.integer(max_events_per_step, "max_events_per_step", minimum=1, maximum=2 ** 31 - 1)
        if log_callback is not None and not callable(log_callback):
            raise TypeError(f"log_callback: expected a callable f(status, instance, category, message), got "
                            f"{type(log_callback).__name__}")
        self._log_callback = log_callback
        self.path = path
        self._private = None   # a directory of this object's own (a binary copy), removed with it
        try:
            self._load(path, name, kind, start_values or {}, inputs, outputs, tolerance, logging_on, max_unpacked)
        except BaseException:
            self.close()
            raise

    # -------------------------------------------------------------------------------------------------------------
    def _load(self, path, name, kind, start_values, inputs, outputs, tolerance, logging_on, max_unpacked):
        require("fmu", "cosim.FMU")
        unpacked = _fmu_cache.unpacked(path, max_unpacked)   # shared by every FMU object of this content
        self._dir, md, md_root = unpacked.dir, unpacked.md, unpacked.md_root
        self.model_description = md
        version = md.fmiMajorVersion
        if version not in (2, 3):
            raise ValueError(f"path: FMI {md.fmiVersion} is not supported (FMI 2.0 and 3.0 are)")
        self.fmi_version = version
        if kind is None:
            kind = "cs" if md.coSimulation is not None else "me"
        iface = md.coSimulation if kind == "cs" else md.modelExchange
        if iface is None:
            have = [k for k, i in (("cs", md.coSimulation), ("me", md.modelExchange)) if i is not None]
            if getattr(md, "scheduledExecution", None) is not None:
                have.append("scheduled execution (FMI 3 clocks; not supported by cosim)")
            raise ValueError(f"kind: the FMU offers no {'co-simulation' if kind == 'cs' else 'model exchange'} "
                             f"interface (it offers {', '.join(have) or 'none'})")
        self.kind = kind
        de = md.defaultExperiment
        #: the FMU's DefaultExperiment ({} if none): start_time, stop_time, step_size, tolerance where given
        self.default_experiment = {} if de is None else {
            k: float(v) for k, v in (("start_time", de.startTime), ("stop_time", de.stopTime),
                                     ("step_size", de.stepSize), ("tolerance", de.tolerance)) if v is not None}
        # the binary is dlopen'ed (its constructors run): only a file inside the archive, named by a plain file name
        ident = _archive.plain_name(iface.modelIdentifier, f"path: modelIdentifier of {str(path)!r}")
        suffix = {"linux": ".so", "darwin": ".dylib", "win32": ".dll"}.get(os.sys.platform, ".so")
        binary = unpacked.binaries.get(ident)
        for plat in _platform_dirs() if binary is None else ():
            cand = _archive.inside(self._dir, f"binaries/{plat}/{ident}{suffix}", f"path: binary of {str(path)!r}")
            if cand.is_file():
                binary = unpacked.binaries[ident] = str(cand)
                break
        if binary is None:
            bdir = os.path.join(self._dir, "binaries")
            have = sorted(os.listdir(bdir)) if os.path.isdir(bdir) else []
            raise ValueError(f"path: {str(path)!r} has no binary {ident}{suffix} for this platform "
                             f"({' or '.join(_platform_dirs())}); binaries: {have or 'none'}")
        # an FMU that allows one instance per process: this object loads its own copy of the binary (a file of
        # another name is another library for the dynamic loader), and that library refuses a second live instance
        self.once_per_process = bool(getattr(iface, "canBeInstantiatedOnlyOncePerProcess", False))
        if self.once_per_process:
            self._private = tempfile.mkdtemp(prefix="cosim_fmu_")
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._private, True)
            binary = shutil.copy(binary, self._private)
        self._lib = _core.fmu_load(binary, version, KINDS[kind], self.once_per_process)
        if self._log_callback is not None:   # set before any instance exists (the C side reads it unlocked)
            user = self._log_callback
            _core.fmu_set_log_callback(self._lib, lambda status, instance, category, text: user(
                _STATUS.get(status, str(status)), instance, category, text))
        if not self.once_per_process:
            unpacked.pins.setdefault((binary, version, kind), self._lib)

        self.name = _check.identifier(name if name is not None else label(md.modelName or ident))
        variables = md.modelVariables
        by_name = {v.name: v for v in variables}
        by_vr = {}
        for v in variables:
            by_vr.setdefault(v.valueReference, v)

        def find(ref, what):
            if isinstance(ref, str):
                if ref in by_name:
                    return by_name[ref]
                close = [n for n in by_name if n.lower() == ref.lower() or label(n) == ref]
                hint = f"; did you mean {close[0]!r}?" if close else f"; variables: {sorted(by_name)[:20]}"
                raise ValueError(f"{what}: unknown variable {ref!r} in FMU {self.name!r}{hint}")
            if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool):
                if int(ref) in by_vr:
                    return by_vr[int(ref)]
                raise ValueError(f"{what}: no variable with value reference {ref} in FMU {self.name!r}")
            raise TypeError(f"{what}: expected a variable name or value reference, got {ref!r}")

        skipped = []

        def select(refs, causality, what):
            """(variable of each signal, its element index, type code): an array variable is one signal per
            element"""
            if refs is None:   # by default every variable of the causality that can be a signal
                chosen = [v for v in variables if v.causality == causality]
                skipped.extend(v for v in chosen if _fmi_types.base(v, version) is None)
                chosen = [v for v in chosen if v not in skipped]
            else:
                if isinstance(refs, (str, int)):
                    raise TypeError(f"{what}: expected a list of variable names or value references")
                chosen = [find(r, what) for r in refs]
            codes = [_fmi_types.signal_code(v, version, what, self.name) for v in chosen]
            out = [(v, e, c) for v, c in zip(chosen, codes) for _, e in _fmi_types.elements(v)]
            return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out]

        uvars, self._elem_u, self._type_u = select(inputs, "input", "inputs")
        yvars, self._elem_y, self._type_y = select(outputs, "output", "outputs")
        #: inputs and outputs left out of the default selection (String, Binary, Clock): no signals
        self.skipped_variables = [v.name for v in skipped]
        #: FMI type of each input and output signal ("Float64", "Int32", "Boolean", ...)
        names = {c: n for n, c in _fmi_types.CODES.items()}
        self.input_types = [names[c] for c in self._type_u]
        self.output_types = [names[c] for c in self._type_y]
        self._uvars, self._yvars = uvars, yvars
        self.nu, self.ny = len(uvars), len(yvars)
        if kind == "me":   # an array state is one state per element
            states = [d.variable.derivative for d in md.derivatives for _ in range(_fmi_types.size(d.variable))]
            self.nx = len(states)
            self._nz = int(md.numberOfEventIndicators or 0)
        else:
            states = []
            self.nx = 0
            self._nz = 0
        # feed-through: an output that depends on an input (no dependency list: assume it does)
        uset = {id(v) for v in uvars}
        ft = False
        listed = {id(o.variable): o for o in md.outputs}
        for v in yvars:
            o = listed.get(id(v))
            if o is None or o.dependencies is None:
                ft = ft or self.nu > 0
            else:
                ft = ft or any(id(d) in uset for d in o.dependencies)
        self.feedthrough = bool(ft)

        self._find, self._version = find, version
        self._md_root = md_root
        #: FMI 3 structural parameters {name: start value}: they size arrays and stay fixed
        self.structural_parameters = {v.name: v.start for v in variables if v.causality == "structuralParameter"}
        self._starts = self._encode_starts(start_values)
        self.start_values = dict(start_values)

        cs = md.coSimulation if kind == "cs" else None
        self.can_rollback = bool(getattr(iface, "canGetAndSetFMUstate", False)
                                 or getattr(iface, "canGetAndSetFMUState", False))
        directional = bool(getattr(iface, "providesDirectionalDerivative", False)
                           or getattr(iface, "providesDirectionalDerivatives", False))
        max_in = 1 if (cs is not None and version == 2 and cs.canInterpolateInputs) else 0
        max_out = int(cs.maxOutputDerivativeOrder or 0) if cs is not None else 0
        # FMI 3 co-simulation: inputs the FMU lets cosim set during doStep (intermediateUpdate="true"); the FMU asks
        # for them through its intermediate update callback (FMI 3.0 §4.2.2)
        # (FMPy does not read the attribute: taken from the XML here)
        self.intermediate_inputs = []
        if cs is not None and version == 3:
            flagged = _intermediate_update_vrs(md_root)
            self.intermediate_inputs = [j for j, v in enumerate(uvars) if int(v.valueReference) in flagged]
        # model exchange: inputs of discrete variability are set in event mode only (FMI 2.0.4 §3.2.3)
        self.discrete_inputs = [j for j, v in enumerate(uvars) if v.variability == "discrete"] if kind == "me" else []
        token = md.guid if version == 2 else md.instantiationToken
        res = os.path.join(self._dir, "resources")
        resources = pathlib.Path(res).as_uri() + "/" if version == 2 else res + os.sep
        self._spec_parts = (("fmu", self.name, self._lib, KINDS[kind], token or "", resources,
                             [int(v.valueReference) for v in uvars], [int(v.valueReference) for v in yvars],
                             self.nx, self._nz),
                            (self.feedthrough, max_in, max_out, int(directional), int(self.can_rollback),
                             logging_on, float(tolerance) if tolerance else -1.0, self.intermediate_inputs,
                             self._max_events, self.discrete_inputs, self._type_u, self._type_y))
        self._spec_tuple = self._make_spec()
        def labels(vs, elems=None):   # an array's elements as name[0] .. name[m-1]
            elems = elems if elems is not None else [e for v in dict.fromkeys(vs) for _, e in _fmi_types.elements(v)]
            return [label(v.name) + (f"[{e}]" if _fmi_types.is_array(v) else "") for v, e in zip(vs, elems)]
        ins, outs, sts = labels(uvars, self._elem_u), labels(yvars, self._elem_y), labels(states)
        x0 = self._initial_states()
        self._init_common(self.name, x0, ins if len(set(ins)) == len(ins) else None,
                          outs if len(set(outs)) == len(outs) else None,
                          sts if len(set(sts)) == len(sts) else None,
                          units=_declared_units({"u": uvars, "y": yvars, "x": states}))
        self._x0_own = self.x0   # x0 as the FMU gave it (initial_states recomputes it for another start time)

    def _encode_starts(self, start_values):
        """Start values by kind for the spec: ((vr, values) of Float64, Int32, Boolean, other numeric types and
        array elements with their codes, Strings, Binaries; the element index of each typed value); ValueError
        naming a bad one."""
        sv = {"r": ([], []), "i": ([], []), "b": ([], []), "t": ([], []), "s": ([], []), "x": ([], [])}
        codes, elems = [], []
        for ref, value in start_values.items():
            v = self._find(ref, "start_values")
            if v.causality == "structuralParameter" and str(value) != str(v.start):
                raise ValueError(f"start_values[{ref!r}]: {v.name!r} is a structural parameter (it sizes arrays: "
                                 f"{v.start}); cosim does not change it")
            max_size = _binary_max_sizes(self._md_root).get(v.valueReference) if v.type == "Binary" else None
            key, val = _fmi_types.start_value(v, self._version, value, ref, max_size)
            if key in ("t", "a"):
                code = _fmi_types.CODES[_fmi_types.base(v, self._version)]
                vals = val if key == "a" else [val]
                sv["t"][0].extend([int(v.valueReference)] * len(vals))
                sv["t"][1].extend(float(x) for x in vals)
                codes.extend([code] * len(vals))
                elems.extend(range(len(vals)) if key == "a" else [0])
                continue
            sv[key][0].append(int(v.valueReference))
            sv[key][1].append(val)
        return (sv["r"][0], np.array(sv["r"][1], dtype=float), sv["i"][0], sv["i"][1], sv["b"][0], sv["b"][1],
                sv["t"][0], codes, np.array(sv["t"][1], dtype=float), sv["s"][0], sv["s"][1], sv["x"][0],
                sv["x"][1], elems)

    def _make_spec(self):
        head, tail = self._spec_parts
        s = self._starts
        return head + s[:6] + tail + s[6:] + (self._elem_u, self._elem_y)

    def _initial_states(self, t_start=0.0):
        """Model exchange: the FMU's continuous states after initialisation at t_start with the current start
        values."""
        if self.kind != "me":
            return None
        try:
            return _core.fmu_initial_states(self._spec_tuple, float(t_start))
        finally:
            self.flush_log()

    def initial_states(self, t_start=0.0):
        """The initial states of a run from ``t_start``: a model-exchange FMU's continuous states after its
        initialisation at ``t_start`` (``x0`` holds those at t = 0), unless ``x0`` was set by hand, which is
        then kept; an empty array for co-simulation."""
        t_start = _check.real(t_start, "t_start")
        if self.kind != "me" or t_start == 0.0 or self.x0 is not self._x0_own:
            return self.x0
        return self._initial_states(t_start)

    def set(self, name, value):
        """Set the start value of variable ``name`` (a parameter, the start of a state or an input; name or value
        reference) for the runs that follow, as ``start_values`` at construction would (the FMU is instantiated
        anew by every run). Model exchange: ``x0`` becomes the FMU's initial states with the new value."""
        starts = dict(self.start_values)
        starts[name] = value
        encoded = self._encode_starts(starts)          # validates before anything changes
        old = self._starts, self._spec_tuple
        self._starts = encoded
        self._spec_tuple = self._make_spec()
        try:
            x0 = self._initial_states()
        except BaseException:
            self._starts, self._spec_tuple = old
            raise
        self.start_values = starts
        if x0 is not None:
            self.x0 = self._x0_own = x0

    # -------------------------------------------------------------------------------------------------------------
    def spec(self):
        """("fmu", name, library handle, kind, ...) (see :meth:`cosim.Subsystem.spec`); ValueError once closed."""
        if getattr(self, "_lib", None) is None:
            raise ValueError(f"FMU {getattr(self, 'name', '?')!r}: closed")
        return self._spec_tuple

    def flush_log(self):
        """Hand the FMU's queued log messages to the Python logger ``cosim.fmu.<name>`` (done after each run)."""
        lib = getattr(self, "_lib", None)
        if lib is None:
            return
        msgs, dropped = _core.fmu_log(lib)
        log = logging.getLogger(f"cosim.fmu.{getattr(self, 'name', 'FMU')}")
        for status, instance, category, text in msgs:
            log.log(_LEVELS.get(status, logging.ERROR), "[%s] %s: %s", category, instance, text)
        if dropped:
            log.warning("%d older FMU log messages were dropped (queue full)", dropped)

    def close(self):
        """Unload the binary (also done at garbage collection); the unpacked files stay for other FMU objects of the
        same content until the process ends (cosim/_fmu_cache.py)."""
        self._lib = None
        cleanup = getattr(self, "_cleanup", None)
        if cleanup is not None:
            cleanup()

    def __repr__(self):
        return (f"FMU({str(self.path)!r}, name={getattr(self, 'name', None)!r}, kind={getattr(self, 'kind', None)!r}, "
                f"fmi={getattr(self, 'fmi_version', None)}, nx={getattr(self, 'nx', 0)}, nu={getattr(self, 'nu', 0)}, "
                f"ny={getattr(self, 'ny', 0)})")


def flush_logs(system):
    """Flush the log queues of every FMU subsystem of ``system`` into Python logging."""
    for s in getattr(system, "subsystems", ()):
        if isinstance(s, FMU):
            s.flush_log()


def _binary_max_sizes(root):
    """{value reference: maxSize} of the FMI 3 Binary variables that declare one (``root``: the parsed
    modelDescription.xml; FMPy does not read the attribute)."""
    vars_ = root.find("ModelVariables")
    return {int(v.get("valueReference")): int(v.get("maxSize")) for v in (vars_ if vars_ is not None else [])
            if v.tag == "Binary" and v.get("maxSize") is not None and v.get("valueReference") is not None}


def _declared_units(variables):
    """{"u[j]"/"y[j]"/"x[i]": unit} of the model description's variables that declare a unit (on the variable or
    on its declared type), keyed by index: FMU variable names need not be unique signal names."""
    out = {}
    for kind, vs in variables.items():
        for i, v in enumerate(vs):
            unit = getattr(v, "unit", None) or getattr(getattr(v, "declaredType", None), "unit", None)
            if isinstance(unit, str) and unit.strip():
                out[f"{kind}[{i}]"] = unit
    return out
