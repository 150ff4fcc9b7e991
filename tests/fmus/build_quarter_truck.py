"""Build the quarter-truck test FMUs (tests/fmus/quarter_truck_fmi2.c): FMI 2.0 co-simulation FMUs of the
``chassis``, ``wheel`` and ``ground`` parts of :func:`cosim.models.quarter_truck` with the system C compiler.

``build_quarter_truck(out_dir, parts=("chassis", "wheel", "ground"))`` compiles each binary (against the FMI
standard headers that FMPy ships), writes ``modelDescription.xml`` and zips both into ``<out_dir>/<part>.fmu``;
returns ``{part: path}``. Nothing binary is committed: tests/test_ecco_fmu.py and benchmarks/energy.py build them
at run time. The helpers (compiler, headers, platform directory, stubs for the FMI functions the source does not
define) are those of tests/fmus/build.py.

Variables (value references; every part is a 2-state LTI, coordinates from static equilibrium, parameters default
to the OSP quarter-truck values of cosim.models.quarter_truck()):

========  ===========================  ==================  ==========  ============================================
part      states (0, 1)                inputs (2, 3)       output (4)  parameters (10, 11, 12)
========  ===========================  ==================  ==========  ============================================
chassis   d = z_w - z_c, vc            v                   F           m_c = 400, k_c = 15000, d_c = 1000
wheel     dt = z_g - z_w, vw           F, vg               v           m_w = 40, k_w = 150000
ground    p, q (q(0) = 1)              (none)              vg          road_amplitude = 0.05, road_frequency = 2
========  ===========================  ==================  ==========  ============================================
"""
from __future__ import annotations

import pathlib
import sys
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import build as _b  # noqa: E402  (tests/fmus/build.py: compilation with stubs, platform)

GUID = "{5a1e3c8e-2b7d-4f0e-9a61-0a7e2c9d4b10}"
PARTS = {"chassis": 1, "wheel": 2, "ground": 3}
# part -> states, inputs, output, parameters [(name, vr, start)]
_VARS = {
    "chassis": (["d", "vc"], ["v"], "F", [("m_c", 10, 400.0), ("k_c", 11, 15000.0), ("d_c", 12, 1000.0)]),
    "wheel": (["dt", "vw"], ["F", "vg"], "v", [("m_w", 10, 40.0), ("k_w", 11, 150000.0)]),
    "ground": (["p", "q"], [], "vg", [("road_amplitude", 10, 0.05), ("road_frequency", 11, 2.0)]),
}
_X0 = {"chassis": (0.0, 0.0), "wheel": (0.0, 0.0), "ground": (0.0, 1.0)}


def compile_part(out_dir, part):
    """Compile the shared library of one part; returns its path (cached in out_dir)."""
    return _b._compile_fixture(out_dir, "quarter_truck_fmi2.c", 2, f"bin_qt_{part}/{part}.so",
                               [f"-DPART={PARTS[part]}"], guid=GUID)


def model_description(part, declare_feedthrough=True):
    """modelDescription.xml (FMI 2.0, co-simulation) of one part. ``declare_feedthrough=False`` leaves the input v
    out of the dependencies of the chassis force F (wrongly: F does depend on v): a master that trusts the
    declaration then reads F after ``doStep`` with the input of the step, as libcosim does for every FMU."""
    states, inputs, output, params = _VARS[part]
    rows = [(s, vr, "local", "continuous", "exact", _X0[part][vr]) for vr, s in enumerate(states)]
    rows += [(u, 2 + j, "input", "continuous", None, 0.0) for j, u in enumerate(inputs)]
    rows += [(output, 4, "output", "continuous", None, None)]
    rows += [(n, vr, "parameter", "fixed", "exact", start) for n, vr, start in params]
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="2.0" modelName="{part}" guid="{GUID}" generationTool="cosim tests" '
             'numberOfEventIndicators="0" variableNamingConvention="flat">',
             f'  <CoSimulation modelIdentifier="{part}" canHandleVariableCommunicationStepSize="true" '
             'canInterpolateInputs="false" maxOutputDerivativeOrder="0" canGetAndSetFMUstate="true" '
             'canSerializeFMUstate="false" providesDirectionalDerivative="false"/>',
             '  <DefaultExperiment startTime="0" stopTime="4" stepSize="1e-4"/>',
             "  <ModelVariables>"]
    index = {}
    for k, (name, vr, caus, var, init, start) in enumerate(rows, 1):
        index[name] = k
        attrs = f'name="{name}" valueReference="{vr}" causality="{caus}" variability="{var}"'
        if init:
            attrs += f' initial="{init}"'
        inner = f'start="{start!r}"' if start is not None else ""
        parts.append(f"    <ScalarVariable {attrs}><Real {inner}/></ScalarVariable>")
    deps = " ".join(str(index[n]) for n in states + (["v"] if part == "chassis" and declare_feedthrough else []))
    parts += ["  </ModelVariables>", "  <ModelStructure>", "    <Outputs>",
              f'      <Unknown index="{index[output]}" dependencies="{deps}"/>', "    </Outputs>",
              "    <InitialUnknowns>", f'      <Unknown index="{index[output]}" dependencies="{deps}"/>',
              "    </InitialUnknowns>", "  </ModelStructure>", "</fmiModelDescription>"]
    return "\n".join(parts) + "\n"


def build_quarter_truck(out_dir, parts=("chassis", "wheel", "ground"), declare_feedthrough=True):
    """Build ``<out_dir>/<part>.fmu`` for each of ``parts``; returns ``{part: pathlib.Path}``.
    ``declare_feedthrough=False``: see :func:`model_description` (the file is then ``chassis_noft.fmu``)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for part in parts:
        if part not in PARTS:
            raise ValueError(f"parts: unknown part {part!r} (known: {sorted(PARTS)})")
        lib = compile_part(out_dir, part)
        path = out_dir / f"{part}{'' if declare_feedthrough or part != 'chassis' else '_noft'}.fmu"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("modelDescription.xml", model_description(part, declare_feedthrough))
            z.write(lib, f"binaries/{_b._platform_dir()}/{part}.so")
        paths[part] = path
    return paths
