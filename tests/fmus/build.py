"""Build the test FMUs (two-mass oscillator halves, tests/fmus/oscillator*.c) with the system C compiler.

``build_fmu(out_dir, mass=1, fmi=2, ...)`` compiles the binary (against the FMI standard headers that FMPy ships in
``fmpy/c-code``), writes ``modelDescription.xml`` and zips both into ``<out_dir>/<name>.fmu``. Nothing binary is
committed: the test suite (tests/conftest.py fixture ``fmus``) and benchmarks/fmu.py call this at run time.

The functions of the FMI API that the fixture does not implement are exported as stubs returning Error (FMPy
resolves every function of the standard when it loads a binary). The FMI boilerplate the sources share is in
fmi2_common.h / fmi3_common.h (and the oscillator's model in oscillator.h), found next to each source; every build
goes to a fresh out_dir, so an edited header is compiled in."""
from __future__ import annotations

import os
import pathlib
import platform
import re
import shutil
import subprocess
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
GUID = "{8c4e810f-3df3-4a00-8276-176fa3c9f000}"

PARAMS = {1: dict(m=10.0, c=1e6, d=1.0), 2: dict(m=10.0, c=1e7, d=2.0)}
# name -> (value reference, start)
_COMMON_PARAMS = [("m", 4), ("c", 5), ("d", 6), ("ck", 7, 1e5), ("dk", 8, 1e3), ("fail_time", 9, 0.0),
                  ("t_kick", 13, 0.0), ("kick", 14, 0.0)]


def _cc():
    for c in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if c and shutil.which(c):
            return c
    raise RuntimeError("no C compiler found (set CC)")


def _headers():
    import fmpy
    return pathlib.Path(fmpy.__file__).parent / "c-code"


def _platform_dir():
    machine = platform.machine().lower()
    return {"linux": "linux64" if machine in ("x86_64", "amd64", "aarch64") else "linux32",
            "darwin": "darwin64"}.get(platform.system().lower(), "linux64")


def _stubs(fmi, source, flags):
    """C source exporting every FMI function of the standard header that `source` does not define. The source is
    read as the compiler sees it (preprocessed with `flags`), so functions that a shared header (fmi2_common.h,
    fmi3_common.h) or a macro defines count as defined."""
    header = (_headers() / f"fmi{fmi}Functions.h").read_text()
    names = sorted(set(re.findall(rf"FMI{fmi}_Export\s+fmi{fmi}\w+TYPE\s+(fmi{fmi}\w+)\s*;", header)))
    text = subprocess.run([_cc(), "-E", *flags, str(source)], check=True, capture_output=True, text=True).stdout
    # a definition: the name, a parameter list, then the body's brace (declarations end with ';')
    defined = set(re.findall(rf"\b(fmi{fmi}\w+)\s*\([^;{{}}()]*\)\s*\{{", text))
    body = [f"int {n}(void) {{ return 3; /* Error: not implemented by the fixture */ }}" for n in names
            if n not in defined]
    return "\n".join(body) + "\n"


def compile_binary(out_dir, mass, fmi):
    """Compile the shared library of one oscillator half; returns its path (cached per (mass, fmi) in out_dir)."""
    return _compile_fixture(out_dir, f"oscillator_fmi{fmi}.c", fmi, f"bin_fmi{fmi}_mass{mass}/Mass{mass}.so",
                            [f"-DMASS={mass}"])


def _variables(mass, fmi):
    """(name, vr, type, causality, variability, initial/None, start/None, derivative-of vr/None)"""
    p = PARAMS[mass]
    v = [("x", 0, "Real", "output" if mass == 1 else "local", "continuous", "exact", 0.1 if mass == 1 else 0.0, None),
         ("v", 1, "Real", "output" if mass == 1 else "local", "continuous", "exact", 0.0, None),
         ("der(x)", 2, "Real", "local", "continuous", "calculated", None, 0),
         ("der(v)", 3, "Real", "local", "continuous", "calculated", None, 1)]
    for item in _COMMON_PARAMS:
        name, vr = item[0], item[1]
        start = p[name] if name in p else item[2]
        v.append((name, vr, "Real", "parameter", "fixed", "exact", start, None))
    if mass == 1:
        v.append(("F", 10, "Real", "input", "continuous", None, 0.0, None))
    else:
        v.append(("x_in", 10, "Real", "input", "continuous", None, 0.0, None))
        v.append(("v_in", 11, "Real", "input", "continuous", None, 0.0, None))
        v.append(("F", 12, "Real", "output", "continuous", "calculated", None, None))
    v.append(("n_steps", 20, "Integer", "parameter", "fixed", "exact", 10, None))
    v.append(("fail_fatal", 21, "Integer", "parameter", "fixed", "exact", 0, None))
    return v


def _md2(mass, kinds, can_state, interpolate):
    ident = f"Mass{mass}"
    st = "true" if can_state else "false"
    parts = [f'<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="2.0" modelName="{ident}" guid="{GUID}" '
             f'generationTool="cosim tests" numberOfEventIndicators="0" variableNamingConvention="structured">']
    if "me" in kinds:
        parts.append(f'  <ModelExchange modelIdentifier="{ident}" canGetAndSetFMUstate="{st}" '
                     f'providesDirectionalDerivative="true"/>')
    if "cs" in kinds:
        parts.append(f'  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true" '
                     f'canInterpolateInputs="{"true" if interpolate else "false"}" maxOutputDerivativeOrder="1" '
                     f'canGetAndSetFMUstate="{st}" providesDirectionalDerivative="true"/>')
    parts.append('  <DefaultExperiment startTime="0" stopTime="0.1" stepSize="1e-4"/>')
    parts.append("  <ModelVariables>")
    variables = _variables(mass, 2)
    index = {}
    for k, (name, vr, typ, caus, var, init, start, der) in enumerate(variables, 1):
        index[vr if typ == "Real" else ("i", vr)] = k
        attrs = f'name="{name}" valueReference="{vr}" causality="{caus}" variability="{var}"'
        if init and not (caus == "output" and init == "calculated"):
            attrs += f' initial="{init}"'
        inner = []
        if start is not None:
            inner.append(f'start="{start!r}"' if typ == "Real" else f'start="{start}"')
        if der is not None:
            inner.append(f'derivative="{der + 1}"')
        parts.append(f'    <ScalarVariable {attrs}><{typ} {" ".join(inner)}/></ScalarVariable>')
    parts.append("  </ModelVariables>")
    parts.append("  <ModelStructure>")
    parts.append("    <Outputs>")
    if mass == 1:
        parts.append(f'      <Unknown index="{index[0]}" dependencies=""/>')
        parts.append(f'      <Unknown index="{index[1]}" dependencies=""/>')
    else:
        parts.append(f'      <Unknown index="{index[12]}" dependencies="{index[0]} {index[1]} {index[10]} {index[11]}"/>')
    parts.append("    </Outputs>")
    parts.append("    <Derivatives>")
    parts.append(f'      <Unknown index="{index[2]}" dependencies="{index[1]}"/>')
    deps = f"{index[0]} {index[1]} {index[10]}" + (f" {index[11]}" if mass == 2 else "")
    parts.append(f'      <Unknown index="{index[3]}" dependencies="{deps}"/>')
    parts.append("    </Derivatives>")
    parts.append("  </ModelStructure>")
    parts.append("</fmiModelDescription>")
    return "\n".join(parts) + "\n"


def _md3(mass, can_state, kinds=("cs",), intermediate=False):
    ident = f"Mass{mass}"
    st = "true" if can_state else "false"
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="3.0" modelName="{ident}" instantiationToken="{GUID}" '
             'generationTool="cosim tests" variableNamingConvention="structured">']
    if "me" in kinds:
        parts.append(f'  <ModelExchange modelIdentifier="{ident}" canGetAndSetFMUState="{st}" '
                     'providesDirectionalDerivatives="true"/>')
    if "cs" in kinds:
        iu = ' providesIntermediateUpdate="true"' if intermediate else ""
        parts.append(f'  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true" '
                     f'canGetAndSetFMUState="{st}" providesDirectionalDerivatives="true" maxOutputDerivativeOrder="1"'
                     f'{iu}/>')
    parts += ['  <DefaultExperiment startTime="0" stopTime="0.1" stepSize="1e-4"/>',
             "  <ModelVariables>",
             '    <Float64 name="time" valueReference="30" causality="independent" variability="continuous"/>']
    for name, vr, typ, caus, var, init, start, der in _variables(mass, 3):
        t3 = "Float64" if typ == "Real" else "Int32"
        attrs = f'name="{name}" valueReference="{vr}" causality="{caus}" variability="{var}"'
        if init and not (caus == "output" and init == "calculated"):
            attrs += f' initial="{init}"'
        if start is not None:
            attrs += f' start="{start!r}"' if typ == "Real" else f' start="{start}"'
        if der is not None:
            attrs += f' derivative="{der}"'
        if intermediate and caus == "input":
            attrs += ' intermediateUpdate="true"'
        parts.append(f"    <{t3} {attrs}/>")
    parts.append("  </ModelVariables>")
    parts.append("  <ModelStructure>")
    if mass == 1:
        parts.append('    <Output valueReference="0" dependencies=""/>')
        parts.append('    <Output valueReference="1" dependencies=""/>')
    else:
        parts.append('    <Output valueReference="12" dependencies="0 1 10 11"/>')
    parts.append('    <ContinuousStateDerivative valueReference="2"/>')
    parts.append('    <ContinuousStateDerivative valueReference="3"/>')
    parts.append("  </ModelStructure>")
    parts.append("</fmiModelDescription>")
    return "\n".join(parts) + "\n"


def build_fmu(out_dir, mass=1, fmi=2, kinds=None, can_state=True, interpolate=True, name=None,
              binary=True, intermediate=False):
    """Build ``<out_dir>/<name>.fmu`` for oscillator half ``mass`` (1 or 2), FMI ``fmi`` (2 or 3). ``kinds``:
    interfaces declared ("cs", "me"; default both for FMI 2, co-simulation for FMI 3). ``intermediate`` (FMI 3):
    declare the inputs intermediateUpdate="true" (the FMU asks for them at every RK4 stage of doStep).
    ``binary=False`` leaves the binary out (an FMU without a binary for this platform)."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if kinds is None:
        kinds = ("cs", "me") if fmi == 2 else ("cs",)
    suffix = "_" + "_".join(kinds) if (fmi == 2 or tuple(kinds) != ("cs",)) else ""
    name = name or (f"Mass{mass}_fmi{fmi}{suffix}{'' if can_state else '_nostate'}"
                    f"{'_intermediate' if intermediate else ''}")
    md = _md2(mass, kinds, can_state, interpolate) if fmi == 2 else _md3(mass, can_state, kinds, intermediate)
    path = out_dir / f"{name}.fmu"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("modelDescription.xml", md)
        if binary:
            lib = compile_binary(out_dir, mass, fmi)
            plat = _platform_dir() if fmi == 2 else {"linux64": "x86_64-linux", "darwin64": "x86_64-darwin"}.get(
                _platform_dir(), "x86_64-linux")
            if fmi == 3 and platform.machine().lower() == "aarch64":
                plat = "aarch64-linux"
            z.write(lib, f"binaries/{plat}/Mass{mass}.so")
        z.writestr("resources/README.txt", "test FMU of cosim\n")
    return path


def build_bouncing_ball(out_dir, name="BouncingBall"):
    """``<out_dir>/<name>.fmu``: the bouncing ball of tests/fmus/bouncing_ball_fmi2.c (FMI 2.0 model exchange, one
    event indicator z = h; parameters g = 9.81, e = 0.7; h(0) = 1, v(0) = 0)."""
    out_dir = pathlib.Path(out_dir)
    lib = _compile_fixture(out_dir, "bouncing_ball_fmi2.c", 2, "bin_ball/BouncingBall.so", stubs=False)
    variables = [("h", 0, "output", "continuous", "exact", "1.0", None), ("v", 1, "output", "continuous", "exact",
                 "0.0", None), ("der(h)", 2, "local", "continuous", "calculated", None, 1),
                 ("der(v)", 3, "local", "continuous", "calculated", None, 2),
                 ("g", 4, "parameter", "fixed", "exact", "9.81", None), ("e", 5, "parameter", "fixed", "exact",
                                                                          "0.7", None)]
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="2.0" modelName="BouncingBall" guid="{GUID}" '
             'generationTool="cosim tests" numberOfEventIndicators="1">',
             '  <ModelExchange modelIdentifier="BouncingBall"/>', "  <ModelVariables>"]
    for name_, vr, caus, var, init, start, der in variables:
        attrs = f'name="{name_}" valueReference="{vr}" causality="{caus}" variability="{var}"'
        if init and not (caus == "output" and init == "calculated"):
            attrs += f' initial="{init}"'
        inner = (f'start="{start}"' if start else "") + (f' derivative="{der}"' if der else "")
        parts.append(f"    <ScalarVariable {attrs}><Real {inner}/></ScalarVariable>")
    parts += ["  </ModelVariables>", "  <ModelStructure>", "    <Outputs>", '      <Unknown index="1" dependencies=""/>',
              '      <Unknown index="2" dependencies=""/>', "    </Outputs>", "    <Derivatives>",
              '      <Unknown index="3" dependencies="2"/>', '      <Unknown index="4" dependencies=""/>',
              "    </Derivatives>", "    <InitialUnknowns>", '      <Unknown index="3"/>', '      <Unknown index="4"/>',
              "    </InitialUnknowns>", "  </ModelStructure>", "</fmiModelDescription>"]
    path = out_dir / f"{name}.fmu"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("modelDescription.xml", "\n".join(parts) + "\n")
        z.write(lib, f"binaries/{_platform_dir()}/BouncingBall.so")
    return path


def _compile_fixture(out_dir, source, fmi, lib_name, defines=(), guid=GUID, stubs=True):
    """Compile tests/fmus/<source> into <out_dir>/<lib_name> once (a fresh out_dir compiles the sources as they are
    now). ``stubs``: also export an Error-returning stub for each FMI function the source does not define."""
    lib = pathlib.Path(out_dir) / lib_name
    if not lib.exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        src = HERE / source
        # the source's own folder is searched for its "..." includes (fmi2_common.h, oscillator.h, ...)
        flags = ["-std=c99", f'-DGUID="{guid}"', *defines, f"-I{_headers()}"]
        files = [str(src)]
        if stubs:
            stub = lib.parent / "stubs.c"
            stub.write_text(_stubs(fmi, src, flags))
            files.append(str(stub))
        cmd = [_cc(), "-shared", "-fPIC", "-O2", *flags, *files, "-o", str(lib), "-lm"]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    return lib


def _pack_fmi3(path, parts, lib, ident):
    """Zip an FMI 3 FMU: modelDescription.xml from ``parts`` and the binary ``lib`` for this platform."""
    plat = "aarch64-linux" if platform.machine().lower() == "aarch64" else "x86_64-linux"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("modelDescription.xml", "\n".join(parts) + "\n")
        z.write(lib, f"binaries/{plat}/{ident}.so")
    return path


def build_lifecycle(out_dir, fmi=2, once=False, name=None):
    """``<out_dir>/<name>.fmu``: the FMU of tests/fmus/lifecycle_fmi{2,3}.c (co-simulation and model exchange;
    x' = 1 (FMI 2: x' = 1 + u_d, u_d an input of discrete variability), output x; parameters t_term (vr 2: ask to terminate there) and fail_init (vr 3)); it logs every call
    outside the FMI state machine with category "illegal". ``once``: declare canBeInstantiatedOnlyOncePerProcess (and
    build the binary so that it refuses a second live instance of itself)."""
    out_dir = pathlib.Path(out_dir)
    lib = _compile_fixture(out_dir, f"lifecycle_fmi{fmi}.c", fmi,
                           f"bin_lifecycle{fmi}{'_once' if once else ''}/Lifecycle.so", [f"-DONCE={int(once)}"])
    flag = f' canBeInstantiatedOnlyOncePerProcess="{"true" if once else "false"}"'
    if fmi == 2:
        parts = ['<?xml version="1.0" encoding="UTF-8"?>',
                 f'<fmiModelDescription fmiVersion="2.0" modelName="Lifecycle" guid="{GUID}" '
                 'generationTool="cosim tests" numberOfEventIndicators="0">',
                 f'  <ModelExchange modelIdentifier="Lifecycle"{flag}/>',
                 f'  <CoSimulation modelIdentifier="Lifecycle" canHandleVariableCommunicationStepSize="true"{flag}/>',
                 '  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>', "  <ModelVariables>",
                 '    <ScalarVariable name="x" valueReference="0" causality="output" variability="continuous" '
                 'initial="exact"><Real start="0"/></ScalarVariable>',
                 '    <ScalarVariable name="der(x)" valueReference="4" causality="local" variability="continuous" '
                 'initial="calculated"><Real derivative="1"/></ScalarVariable>',
                 '    <ScalarVariable name="t_term" valueReference="2" causality="parameter" variability="fixed" '
                 'initial="exact"><Real start="0"/></ScalarVariable>',
                 '    <ScalarVariable name="fail_init" valueReference="3" causality="parameter" variability="fixed" '
                 'initial="exact"><Integer start="0"/></ScalarVariable>',
                 '    <ScalarVariable name="u_d" valueReference="5" causality="input" variability="discrete">'
                 '<Real start="0"/></ScalarVariable>',
                 '    <ScalarVariable name="steps" valueReference="6" causality="output" variability="discrete">'
                 '<Integer/></ScalarVariable>',
                 '    <ScalarVariable name="late" valueReference="7" causality="output" variability="discrete">'
                 '<Boolean/></ScalarVariable>',
                 '    <ScalarVariable name="label" valueReference="8" causality="parameter" variability="fixed" '
                 'initial="exact"><String start=""/></ScalarVariable>',
                 '    <ScalarVariable name="hold" valueReference="9" causality="input" variability="discrete">'
                 '<Boolean start="false"/></ScalarVariable>',
                 '    <ScalarVariable name="label_length" valueReference="10" causality="output" '
                 'variability="discrete"><Integer/></ScalarVariable>',
                 "  </ModelVariables>", "  <ModelStructure>", "    <Outputs>",
                 '      <Unknown index="1" dependencies=""/>', '      <Unknown index="6" dependencies=""/>',
                 '      <Unknown index="7" dependencies=""/>', '      <Unknown index="10" dependencies=""/>',
                 "    </Outputs>", "    <Derivatives>",
                 '      <Unknown index="2" dependencies="5 9"/>', "    </Derivatives>", "  </ModelStructure>",
                 "</fmiModelDescription>"]
    else:
        parts = ['<?xml version="1.0" encoding="UTF-8"?>',
                 f'<fmiModelDescription fmiVersion="3.0" modelName="Lifecycle" instantiationToken="{GUID}" '
                 'generationTool="cosim tests">',
                 f'  <ModelExchange modelIdentifier="Lifecycle"{flag}/>',
                 f'  <CoSimulation modelIdentifier="Lifecycle" canHandleVariableCommunicationStepSize="true"{flag}/>',
                 '  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>', "  <ModelVariables>",
                 '    <Float64 name="time" valueReference="30" causality="independent" variability="continuous"/>',
                 '    <Float64 name="x" valueReference="0" causality="output" variability="continuous" '
                 'initial="exact" start="0"/>',
                 '    <Float64 name="der(x)" valueReference="4" causality="local" variability="continuous" '
                 'initial="calculated" derivative="0"/>',
                 '    <Float64 name="t_term" valueReference="2" causality="parameter" variability="fixed" '
                 'initial="exact" start="0"/>',
                 '    <Int32 name="fail_init" valueReference="3" causality="parameter" variability="fixed" '
                 'initial="exact" start="0"/>',
                 "  </ModelVariables>", "  <ModelStructure>", '    <Output valueReference="0" dependencies=""/>',
                 '    <ContinuousStateDerivative valueReference="4"/>', "  </ModelStructure>",
                 "</fmiModelDescription>"]
    path = out_dir / f"{name or f'Lifecycle{fmi}' + ('_once' if once else '')}.fmu"
    if fmi == 3:
        return _pack_fmi3(path, parts, lib, "Lifecycle")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("modelDescription.xml", "\n".join(parts) + "\n")
        z.write(lib, f"binaries/{_platform_dir()}/Lifecycle.so")
    return path


TYPES3 = ["Float32", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64", "Boolean"]


def build_types(out_dir, name="Types3"):
    """``<out_dir>/<name>.fmu``: the FMU of tests/fmus/types_fmi3.c (FMI 3.0 co-simulation): for every numeric type
    T of TYPES3 an input in_T and an output out_T = in_T + 1 (Boolean: not in_T), the Float64 output total and the
    String parameter label."""
    out_dir = pathlib.Path(out_dir)
    lib = _compile_fixture(out_dir, "types_fmi3.c", 3, "bin_types3/Types3.so")
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="3.0" modelName="Types3" instantiationToken="{GUID}" '
             'generationTool="cosim tests">',
             '  <CoSimulation modelIdentifier="Types3" canHandleVariableCommunicationStepSize="true"/>',
             "  <ModelVariables>",
             '    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>']
    for i, t in enumerate(TYPES3):
        start = "false" if t == "Boolean" else "0"
        parts.append(f'    <{t} name="in_{t}" valueReference="{10 + i}" causality="input" variability="discrete" '
                     f'start="{start}"/>')
        parts.append(f'    <{t} name="out_{t}" valueReference="{30 + i}" causality="output" variability="discrete"/>')
    parts += ['    <Float64 name="total" valueReference="50" causality="output" variability="discrete"/>',
              '    <String name="label" valueReference="60" causality="parameter" variability="fixed"><Start '
              'value=""/></String>',
              "  </ModelVariables>", "  <ModelStructure>"]
    parts += [f'    <Output valueReference="{30 + i}" dependencies=""/>' for i in range(len(TYPES3))]
    parts += ['    <Output valueReference="50" dependencies=""/>', "  </ModelStructure>", "</fmiModelDescription>"]
    return _pack_fmi3(out_dir / f"{name}.fmu", parts, lib, "Types3")


def build_statespace(out_dir, name="StateSpace3", kinds=("cs", "me")):
    """``<out_dir>/<name>.fmu``: the FMU of tests/fmus/statespace_fmi3.c (FMI 3.0; x' = A x + B u, y = C x + D u with
    array variables sized by the structural parameters m = 2, n = 3, r = 2; the Binary parameter blob and the Int32
    output blob_sum)."""
    out_dir = pathlib.Path(out_dir)
    lib = _compile_fixture(out_dir, "statespace_fmi3.c", 3, "bin_statespace3/StateSpace3.so")
    state = ' canGetAndSetFMUState="true"'
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="3.0" modelName="StateSpace3" instantiationToken="{GUID}" '
             'generationTool="cosim tests">']
    if "me" in kinds:
        parts.append(f'  <ModelExchange modelIdentifier="StateSpace3"{state}/>')
    if "cs" in kinds:
        parts.append(f'  <CoSimulation modelIdentifier="StateSpace3" canHandleVariableCommunicationStepSize="true"'
                     f'{state}/>')

    def dims(*vrs):
        return "".join(f'<Dimension valueReference="{v}"/>' for v in vrs)

    parts += ['  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>', "  <ModelVariables>",
              '    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>',
              '    <UInt64 name="m" valueReference="1" causality="structuralParameter" variability="fixed" start="2"/>',
              '    <UInt64 name="n" valueReference="2" causality="structuralParameter" variability="fixed" start="3"/>',
              '    <UInt64 name="r" valueReference="3" causality="structuralParameter" variability="fixed" start="2"/>',
              '    <Float64 name="A" valueReference="4" causality="parameter" variability="tunable" '
              f'start="-1 2 0 -2 -1 0 0 0 -3">{dims(2, 2)}</Float64>',
              '    <Float64 name="B" valueReference="5" causality="parameter" variability="tunable" '
              f'start="1 0 0 1 1 1">{dims(2, 1)}</Float64>',
              '    <Float64 name="C" valueReference="6" causality="parameter" variability="tunable" '
              f'start="1 0 0 0 1 1">{dims(3, 2)}</Float64>',
              '    <Float64 name="D" valueReference="7" causality="parameter" variability="tunable" '
              f'start="0.5 0 0 0">{dims(3, 1)}</Float64>',
              '    <Float64 name="x0" valueReference="8" causality="parameter" variability="fixed" '
              f'start="1 0 -1">{dims(2)}</Float64>',
              f'    <Float64 name="u" valueReference="9" causality="input" start="1 -0.5">{dims(1)}</Float64>',
              f'    <Float64 name="y" valueReference="10" causality="output">{dims(3)}</Float64>',
              f'    <Float64 name="x" valueReference="11" causality="local" initial="calculated">{dims(2)}</Float64>',
              f'    <Float64 name="der(x)" valueReference="12" causality="local" derivative="11">{dims(2)}'
              '</Float64>',
              '    <Binary name="blob" valueReference="20" causality="parameter" variability="tunable" maxSize="16">'
              '<Start value="0A0B0C"/></Binary>',
              '    <Int32 name="blob_sum" valueReference="21" causality="output" variability="discrete"/>',
              "  </ModelVariables>", "  <ModelStructure>", '    <Output valueReference="10"/>',
              '    <Output valueReference="21" dependencies=""/>',
              '    <ContinuousStateDerivative valueReference="12"/>', "  </ModelStructure>", "</fmiModelDescription>"]
    return _pack_fmi3(out_dir / f"{name}.fmu", parts, lib, "StateSpace3")
