"""One source for the option codes: ``cosim._core.codes`` is built from the C enums (csrc/py/codes.c). Every
enumerator of an exported enum has a name there with its C value, every Python table that chooses a code takes it
from there and reaches every C code of its kind, and no module keeps a hand-copied table of codes."""
import importlib
import pathlib
import re

from cosim import _core

stability, approximations, control, coupling, energy, fmu, metrics, schemes, simulate, solvers, sysid, fmi_types = (
    importlib.import_module(f"cosim.{m}") for m in ("stability", "approximations", "control", "coupling", "energy",
                                                    "fmu", "metrics", "schemes", "simulate", "solvers", "sysid",
                                                    "_fmi_types"))

CSRC = pathlib.Path(__file__).resolve().parent.parent / "csrc"
COSIM = pathlib.Path(__file__).resolve().parent.parent / "cosim"


def enum_blocks():
    """Every anonymous ``enum { A = 0, B = 1 }`` of the C headers as a dict {enumerator: value}."""
    blocks = []
    for h in CSRC.rglob("*.h"):
        text = re.sub(r"/\*.*?\*/", "", h.read_text(), flags=re.S)
        for body in re.findall(r"enum\s*\{([^}]*)\}", text):
            items = dict(re.findall(r"(CS_\w+)\s*=\s*(-?\d+)", body))
            if items:
                blocks.append({k: int(v) for k, v in items.items()})
    return blocks


def exported_tables():
    """{kind: {name: enumerator}} as written in csrc/py/codes.c."""
    text = (CSRC / "py" / "codes.c").read_text()
    tables = {}
    for var, body in re.findall(r"static const code_name (\w+)\[\] = \{(.*?)\};", text, flags=re.S):
        tables[var] = dict(re.findall(r'\{"([^"]+)", (CS_\w+)\}', body))
    kinds = dict(re.findall(r'KIND\("(\w+)", (\w+)\)', text))
    return {kind: tables[var] for kind, var in kinds.items()}


def registry_tables():
    """{capability: [kind names in order]} of the kinds chosen per run, as written in csrc/master/registry.c (one
    line per kind, `&descriptor`; a kind's code is its index) and the descriptors' definitions in the kinds'
    implementation files (`const cs_kind descriptor = {"name", ..., {.coupling = create}, ...}`)."""
    descriptors = {}
    for f in CSRC.rglob("*.c"):
        for var, name, body in re.findall(r'^const cs_kind (\w+) = \{"([^"]+)",(.*?)\};', f.read_text(),
                                          flags=re.S | re.M):
            descriptors[var] = (name, bool(re.search(r"\{\.(coupling|scheme|control) =", body)))
    text = (CSRC / "master" / "registry.c").read_text()
    bodies = dict(re.findall(r"static const cs_kind \*const (\w+)\[\] = \{(.*?)\};", text, flags=re.S))
    caps = dict((var, cap) for cap, var in re.findall(r'CAPABILITY\("(\w+)", (\w+)\)', text))
    tables = {caps[var]: [descriptors[d] for d in re.findall(r"&(\w+)", body)] for var, body in bodies.items()}
    return {cap: [name for name, _ in kinds] for cap, kinds in tables.items() if all(chosen for _, chosen in kinds)}


def test_every_enumerator_is_exported_with_its_value():
    blocks = enum_blocks()
    values = {k: v for b in blocks for k, v in b.items()}
    tables = exported_tables()
    registry = registry_tables()
    assert set(registry) == {"coupling", "scheme", "step_control"}
    assert set(tables) | set(registry) == set(_core.codes) and not set(tables) & set(registry)
    for cap, names in registry.items():
        assert _core.codes[cap] == {n: q for q, n in enumerate(names)}, cap
    # the scheme objects' kind enum is the registry's code of each scheme, every enumerator named there
    scheme_enum = {k: v for k, v in values.items() if k.startswith("CS_SCHEME_")}
    assert scheme_enum == {"CS_SCHEME_" + n.upper().replace("-", "_"): q for n, q in _core.codes["scheme"].items()}
    for kind, names in tables.items():
        assert {n: values[e] for n, e in names.items()} == _core.codes[kind], kind
        used = set(names.values())
        enum = set().union(*(b for b in blocks if used & set(b)))
        assert enum == used, f"{kind}: C enumerators without a name in csrc/py/codes.c: {sorted(enum - used)}"


def python_codes():
    """{kind: codes the Python layer can choose} from the tables and classes that build the options."""
    A = approximations
    return {
        "scheme": set(simulate.SCHEMES.values()) | {schemes.Implicit.code, schemes.WaveformRelaxation.code}
        | set(stability._SCHEMES.values()),
        "update": set(simulate.UPDATES.values()) | set(stability._UPDATES.values()),
        "startup": set(simulate.STARTUPS.values()),
        "approximation": {A.Lagrange(1).kind, A.ExtrapolatedInterpolation(1, 0).kind,
                          A.ExtrapolatedInterpolation(1, 1).kind, A.Hermite(1).kind, A.LeastSquares(2, 8).kind,
                          A.IntegratedAcceleration(0).kind, A.RelaxedAcceleration(1, 1).kind},
        "solver": {solvers.Euler.kind, solvers.RK4.kind, solvers.Exact.kind, solvers.CVODE.kind, solvers.AB2.kind},
        "ab2_starter": set(solvers.AB2.STARTERS.values()),
        "linear_solver": set(solvers._LINEAR_SOLVERS.values()),
        "jacobian": set(schemes.JACOBIANS.values()),
        "acceleration": set(schemes.ACCELERATIONS.values()),
        "waveform": set(schemes.WAVEFORMS.values()),
        "on_failure": set(schemes.ON_FAILURE.values()),
        "estimator": set(control.ESTIMATORS.values()),
        "order_strategy": set(control.ORDER_STRATEGIES.values()) | {control._FIXED_ORDER},
        "monitor_group": {control._POS, control._VEL},
        "balance_kernel": set(energy.KERNELS.values()),
        "balance_variant": set(energy.VARIANTS.values()),
        "prestep_variant": set(coupling._PRESTEP_VARIANT.values()),
        "ij_source": set(coupling._IJ_SOURCE.values()),
        "prestep_phase": set(coupling.PHASES) | set(coupling.REASONS),
        "mbcorr_shape": set(coupling._SHAPES.values()),
        "mbcorr_phase": set(coupling.MBCORR_PHASES),
        "moesp_method": set(sysid._MOESP_METHODS.values()),
        "fmu_kind": set(fmu.KINDS.values()),
        "fmu_type": set(fmi_types.CODES.values()),
        "coupling": {coupling._KIND_SIGNAL, coupling._KIND_PRESTEP, coupling._KIND_NEPCE}
        | {_core.codes["coupling"][k] for k in coupling_kinds()},
        "step_control": {_core.codes["step_control"][o["kind"]] for o in step_control_specs()},
        # statuses are read, not chosen: the ones Python names must be the C ones
        "status": {simulate._ERR_DIVERGED, simulate._STOPPED, simulate._TERMINATED, metrics._STATUS_DIVERGED},
    }


def coupling_kinds():
    """The kinds the coupling option classes choose: every subclass of cosim.Coupling built with its defaults (the
    signal-based ones, FOH and Quadratic, choose no kind: the run's default, "signal")."""
    import cosim
    sys2 = cosim.models.two_mass_oscillator()
    classes, kinds = [coupling.Coupling], {"signal"}
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        spec = cls()._options(sys2, 1e-3, 0.01)
        if spec is not None:
            kinds.add(spec["kind"])
    return kinds


def step_control_specs():
    """The specs of the step controllers Python offers (kraft2021's StepControl, ECCO)."""
    import cosim
    sys2 = cosim.models.two_mass_oscillator()
    ecco = cosim.ECCO(power_bonds=[(("S1.y[1]",), ("S1.u[0]",), ("S2.u[0]",), ("S2.y[0]",))])
    return [cosim.StepControl()._options(sys2, cosim.Lagrange(1), "jacobi", 0.01, 1e-3), ecco._spec(sys2)]


def test_python_names_reach_exactly_the_c_codes():
    py = python_codes()
    assert set(py) == set(_core.codes), "a C kind without Python names, or Python names of an unknown kind"
    for kind, codes in py.items():
        c = set(_core.codes[kind].values())
        assert codes <= c, f"{kind}: Python codes {sorted(codes - c)} are not C codes"
        if kind != "status":
            assert codes == c, f"{kind}: C codes {sorted(c - codes)} have no Python name"
    assert simulate._ERR_DIVERGED == metrics._STATUS_DIVERGED == _core.codes["status"]["diverged"]
    assert simulate._STOPPED == _core.codes["status"]["stopped"]


def test_no_hand_copied_code_table():
    """A dict literal of names to int literals in cosim/ is a copy of a C enum (the listed flags are not codes)."""
    flags = {"CONVERGENCE", "_SOLVE", "_SEMANTICS", "_SBC"}
    found = []
    for f in COSIM.rglob("*.py"):
        for line in f.read_text().splitlines():
            m = re.search(r'(\w+)\s*=\s*\{\s*(None|"[^"]+"):\s*-?\d+\s*,', line)
            if m and m.group(1) not in flags:
                found.append(f"{f.name}: {line.strip()}")
    assert not found, found


def test_option_specs_name_only_c_parameters():
    """Every option object's spec is a dict of the named parameters of its C kind (``_core.kinds``, the registry's
    parameter tables, master/registry.c): each key names a C parameter, and the kind names the registry's."""
    import numpy as np
    import cosim
    kinds = _core.kinds
    assert set(kinds["coupling"]) == set(_core.codes["coupling"])
    assert set(kinds["scheme"]) == set(_core.codes["scheme"])
    solver = set(kinds["solver"]["solver"])
    for s in (cosim.Euler(), cosim.RK4(h=1e-3), cosim.Exact(), cosim.CVODE(linear_solver="band", bandwidth=(1, 1)),
              cosim.AB2()):
        assert set(s.spec()) <= solver, type(s).__name__
    for sch in (cosim.Implicit(), cosim.WaveformRelaxation()):
        spec = sch.spec(1)
        assert spec["kind"] in kinds["scheme"] and set(spec) - {"kind"} == set(kinds["scheme"][spec["kind"]])
    sys2 = cosim.models.two_mass_oscillator()
    for cpl in (cosim.NEPCE(), cosim.PreStep()):
        spec = cpl._options(sys2, 1e-3, 0.01)
        assert spec["kind"] in kinds["coupling"] and set(spec) - {"kind"} <= set(kinds["coupling"][spec["kind"]])
    spec = cosim.StepControl()._options(sys2, cosim.Lagrange(1), "jacobi", 0.01, 1e-3)
    assert set(spec) - {"kind"} == set(kinds["step_control"]["kraft"])
    assert set(cosim.BalanceCorrection()._spec()) == set(kinds["balance"]["balance"])
    assert np.ndim(kinds["step_control"]["ecco"]) == 1
