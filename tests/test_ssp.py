"""SSP import (issue 29, part 6): nested systems flattened, system connectors, linear transformations with offset,
system-level parameter bindings with .ssv, .ssm mappings and prefix, implementation, DefaultExperiment, and an
error naming every element cosim does not support. Each structure is checked against the same system written
directly with cosim (bit-for-bit: the same FMUs, start values and connections)."""
import pathlib
import shutil
import sys
import zipfile

import numpy as np
import pytest

import cosim

pytest.importorskip("fmpy")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
import build  # noqa: E402

if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler for the test FMUs", allow_module_level=True)

NS = ('xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" '
      'xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" '
      'xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping" '
      'xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"')


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("ssp")
    return {1: build.build_fmu(d, 1, 2), 2: build.build_fmu(d, 2, 2)}


def ssd(body, experiment=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<ssd:SystemStructureDescription {NS} version="1.0" name="t">\n'
            f'{body}\n{experiment}\n</ssd:SystemStructureDescription>\n')


def ssv(params):
    body = "".join(f'<ssv:Parameter name="{n}"><ssv:{t} value="{v}"/></ssv:Parameter>' for n, t, v in params)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<ssv:ParameterSet {NS} version="1.0" name="p">'
            f'<ssv:Parameters>{body}</ssv:Parameters></ssv:ParameterSet>\n')


def pack(tmp_path, fmus, text, files=(), name="t.ssp"):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("SystemStructure.ssd", text)
        z.write(fmus[1], "resources/Mass1.fmu")
        z.write(fmus[2], "resources/Mass2.fmu")
        for n, data in files:
            z.writestr(n, data)
    return path


def component(name, mass, extra="", attrs=""):
    return (f'<ssd:Component name="{name}" source="resources/Mass{mass}.fmu" '
            f'type="application/x-fmu-sharedlibrary"{attrs}>{extra}</ssd:Component>')


def conn(se, sc, ee, ec, inner=""):
    s = f'startElement="{se}" ' if se else ""
    e = f'endElement="{ee}" ' if ee else ""
    return f'<ssd:Connection {s}startConnector="{sc}" {e}endConnector="{ec}">{inner}</ssd:Connection>'


def connectors(*items):
    return "<ssd:Connectors>" + "".join(f'<ssd:Connector name="{n}" kind="{k}"/>' for n, k in items) + \
        "</ssd:Connectors>"


def run(system):
    return cosim.simulate(system, t_end=0.01, H=1e-3, solver=cosim.RK4(substeps=10))


def direct(fmus, starts1=None, starts2=None, offset=0.0, gain=1.0, kind="me"):
    a = cosim.FMU(fmus[1], name="S1", kind=kind, start_values=starts1)
    b = cosim.FMU(fmus[2], name="Sub_S2", kind=kind, start_values=starts2)
    cs = [cosim.connect("Sub_S2.F", "S1.F"), cosim.connect("S1.x", "Sub_S2.x_in", gain),
          cosim.connect("S1.v", "Sub_S2.v_in")]
    if offset:
        cs.append(cosim.connect(offset, "Sub_S2.x_in"))
    return cosim.CoupledSystem([a, b], cs)


NESTED = """<ssd:System name="root">
  {root_connectors}
  <ssd:Elements>
    {s1}
    <ssd:System name="Sub">
      {sub_connectors}
      <ssd:Elements>{s2}</ssd:Elements>
      <ssd:Connections>
        {sub_conns}
      </ssd:Connections>
      {sub_bindings}
    </ssd:System>
  </ssd:Elements>
  <ssd:Connections>
    {root_conns}
  </ssd:Connections>
  {root_bindings}
</ssd:System>"""

SUB_CONNECTORS = connectors(("x_in", "input"), ("v_in", "input"), ("F", "output"))
SUB_CONNS = (conn(None, "x_in", "S2", "x_in", '<ssc:LinearTransformation factor="2" offset="0.25"/>')
             + conn(None, "v_in", "S2", "v_in") + conn("S2", "F", None, "F"))
ROOT_CONNS = (conn("Sub", "F", "S1", "F") + conn("S1", "x", "Sub", "x_in",
                                                 '<ssc:LinearTransformation factor="0.5" offset="-0.1"/>')
              + conn("S1", "v", "Sub", "v_in"))


OFFSET = 2 * -0.1 + 0.25   # the composed offset, in the order cosim composes it (0.05 up to rounding)


def nested(**kw):
    parts = dict(root_connectors="", s1=component("S1", 1), sub_connectors=SUB_CONNECTORS, s2=component("S2", 2),
                 sub_conns=SUB_CONNS, sub_bindings="", root_conns=ROOT_CONNS, root_bindings="")
    parts.update(kw)
    return ssd(NESTED.format(**parts))


def test_nested_system_connectors_and_offsets_flatten_to_the_direct_system(fmus, tmp_path):
    """S1.x -> Sub.x_in (0.5 y - 0.1) -> S2.x_in (2 u + 0.25): u = 2 (0.5 y - 0.1) + 0.25 = y + 0.05."""
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, nested()), kind="me")
    assert s.names == ["S1", "Sub_S2"]
    np.testing.assert_array_equal(run(s).X, run(direct(fmus, offset=OFFSET)).X)


def bind(params, prefix=None, mapping=None, source="resources/p.ssv"):
    p = f' prefix="{prefix}"' if prefix is not None else ""
    m = f'<ssd:ParameterMapping source="{mapping}"/>' if mapping else ""
    return f'<ssd:ParameterBindings><ssd:ParameterBinding source="{source}"{p}>{m}</ssd:ParameterBinding>' \
           '</ssd:ParameterBindings>'


def test_system_level_bindings_prefix_mapping_and_precedence(fmus, tmp_path):
    # root binding reaches S1.m (by element path) and Sub.S2.ck (through the nested system)
    text = nested(root_bindings=bind(None))
    files = [("resources/p.ssv", ssv([("S1.m", "Real", 2.0), ("Sub.S2.ck", "Real", 2e5)]))]
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text, files), kind="me")
    assert s["S1"].start_values == {"m": 2.0} and s["Sub_S2"].start_values == {"ck": 2e5}
    np.testing.assert_array_equal(run(s).X, run(direct(fmus, {"m": 2.0}, {"ck": 2e5}, offset=OFFSET)).X)
    # prefix: prepended to the names of the parameter source
    text = nested(root_bindings=bind(None, prefix="S1."))
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text, [("resources/p.ssv", ssv([("m", "Real", 3.0)]))],
                                          "prefix.ssp"), kind="me")
    assert s["S1"].start_values == {"m": 3.0}
    # .ssm: parameter "mass" mapped to S1.m with a linear transformation (2 * 1.5 + 0.5 = 3.5)
    ssm = (f'<?xml version="1.0" encoding="UTF-8"?><ssm:ParameterMapping {NS} version="1.0">'
           '<ssm:MappingEntry source="mass" target="S1.m"><ssc:LinearTransformation factor="2" offset="0.5"/>'
           '</ssm:MappingEntry><ssm:MappingEntry source="" target="S1.c"/></ssm:ParameterMapping>')
    text = nested(root_bindings=bind(None, mapping="resources/p.ssm"))
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text, [("resources/p.ssv", ssv([("mass", "Real", 1.5)])),
                                                                 ("resources/p.ssm", ssm)], "map.ssp"), kind="me")
    assert s["S1"].start_values == {"m": 3.5}
    # precedence: the component's own binding m = 5, the root's m = 4: the higher level wins
    s1 = component("S1", 1, bind(None, source="resources/own.ssv"))
    text = nested(s1=s1, root_bindings=bind(None))
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text, [("resources/p.ssv", ssv([("S1.m", "Real", 4.0)])),
                                                                 ("resources/own.ssv", ssv([("m", "Real", 5.0),
                                                                                            ("d", "Real", 3.0)]))],
                                          "prec.ssp"), kind="me")
    assert s["S1"].start_values == {"m": 4.0, "d": 3.0}


def test_system_parameter_connector_flows_through_its_connection(fmus, tmp_path):
    """A value bound to the root's parameter connector M reaches S1.m through a connection with a linear
    transformation (3 * 2 - 1 = 5)."""
    text = nested(root_connectors=connectors(("M", "parameter")),
                  root_conns=ROOT_CONNS + conn(None, "M", "S1", "m",
                                               '<ssc:LinearTransformation factor="3" offset="-1"/>'),
                  root_bindings=bind(None))
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text, [("resources/p.ssv", ssv([("M", "Real", 2.0)]))]),
                                     kind="me")
    assert s["S1"].start_values == {"m": 5.0}
    assert len(s.connections) == 4   # the parameter connection is no signal


def test_implementation_and_default_experiment(fmus, tmp_path):
    text = ssd(NESTED.format(root_connectors="", s1=component("S1", 1, attrs=' implementation="CoSimulation"'),
                             sub_connectors=SUB_CONNECTORS,
                             s2=component("S2", 2, attrs=' implementation="ModelExchange"'), sub_conns=SUB_CONNS,
                             sub_bindings="", root_conns=ROOT_CONNS, root_bindings=""),
               '<ssd:DefaultExperiment startTime="0.5" stopTime="2.5"/>')
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text))
    assert s["S1"].kind == "cs" and s["Sub_S2"].kind == "me"
    assert s.default_experiment == {"start_time": 0.5, "stop_time": 2.5}
    assert cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text, name="k.ssp"), kind="me")["S1"].kind == "me"


def test_top_level_input_connector_leaves_the_input_unconnected(fmus, tmp_path):
    text = nested(root_connectors=connectors(("Fext", "input")),
                  root_conns=conn("S1", "x", "Sub", "x_in") + conn("S1", "v", "Sub", "v_in")
                  + conn(None, "Fext", "S1", "F"))
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text), kind="me")
    assert s.unconnected_inputs == ["S1.F"]


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace("<ssd:Elements>", "<ssd:SignalDictionaries/><ssd:Elements>", 1), "signal dictionaries"),
    (lambda t: t.replace('<ssc:LinearTransformation factor="2" offset="0.25"/>',
                         "<ssc:BooleanMappingTransformation/>"), "BooleanMappingTransformation is not supported"),
    (lambda t: t.replace("<ssd:Elements>", "<ssd:Foo/><ssd:Elements>", 1), "holds a Foo element"),
    (lambda t: t.replace('type="application/x-fmu-sharedlibrary"', 'type="application/x-ssp-package"', 1),
     "nested SSP packages"),
    (lambda t: t.replace('startElement="S2" startConnector="F"', 'startElement="S3" startConnector="F"'),
     "unknown element 'S3'"),
    (lambda t: t.replace('implementation', 'x').replace('name="S1"', 'name="S1" implementation="Both"'),
     "implementation 'Both'"),
])
def test_unsupported_elements_are_named(fmus, tmp_path, change, message):
    with pytest.raises(ValueError, match=message):
        cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, change(nested())))


@pytest.mark.parametrize("params, message", [
    ([("S1.m", "String", "heavy")], "type String"),
    ([("S1.nothing_here", "Real", 1.0)], "unknown variable 'nothing_here'"),
    ([("Nowhere.m", "Real", 1.0)], "names no connector"),
    ([("S1.m", "Real", "abc")], "expected a number"),
])
def test_bad_parameter_values_are_named(fmus, tmp_path, params, message):
    text = nested(root_bindings=bind(None))
    with pytest.raises(ValueError, match=message):
        cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text, [("resources/p.ssv", ssv(params))]), kind="me")


def test_parameter_unit_must_match_the_variable(fmus, tmp_path):
    """cosim converts no units: a bound value in another unit than the variable's is an error."""
    kg = tmp_path / "Mass1_kg.fmu"
    with zipfile.ZipFile(fmus[1]) as zin, zipfile.ZipFile(kg, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "modelDescription.xml":
                data = data.replace(b'initial="exact"><Real start="10.0"/>', b'initial="exact"><Real unit="kg" '
                                    b'start="10.0"/>')
            zout.writestr(info, data)
    text = nested(root_bindings=bind(None))
    for unit, ok in (("kg", True), ("g", False)):
        values = ssv([("S1.m", "Real", 2.0)]).replace('<ssv:Real value="2.0"/>', f'<ssv:Real value="2.0" unit="{unit}"/>')
        path = pack(tmp_path, {1: kg, 2: fmus[2]}, text, [("resources/p.ssv", values)], f"{unit}.ssp")
        if ok:
            assert cosim.CoupledSystem.from_ssp(path, kind="me")["S1"].start_values == {"m": 2.0}
        else:
            with pytest.raises(ValueError, match="given in 'g', the FMU declares 'kg'"):
                cosim.CoupledSystem.from_ssp(path, kind="me")


def test_simulate_takes_the_ssps_default_experiment_before_the_fmus(fmus, tmp_path):
    """startTime/stopTime of the SSP (0.5, 2.5) win over the FMUs' (0, 0.1); the step size comes from the FMUs'
    stepSize unless given; an explicit argument wins over both (tests/test_fmu_experiment.py for FMUs alone)."""
    text = ssd(NESTED.format(root_connectors="", s1=component("S1", 1), sub_connectors=SUB_CONNECTORS,
                             s2=component("S2", 2), sub_conns=SUB_CONNS, sub_bindings="", root_conns=ROOT_CONNS,
                             root_bindings=""),
               '<ssd:DefaultExperiment startTime="0.5" stopTime="2.5"/>')
    s = cosim.CoupledSystem.from_ssp(pack(tmp_path, fmus, text), kind="cs")
    res = cosim.simulate(s, H=0.5)
    np.testing.assert_array_equal(res.t, [0.5, 1.0, 1.5, 2.0, 2.5])
    res = cosim.simulate(s, t_end=0.5 + 1e-3)
    assert res.t[0] == 0.5 and len(res.t) == 11   # H = 1e-4 from the FMUs' DefaultExperiment
    res = cosim.simulate(s, t_start=0.0, t_end=0.2, H=0.1)
    np.testing.assert_array_equal(res.t, [0.0, 0.1, 0.2])
