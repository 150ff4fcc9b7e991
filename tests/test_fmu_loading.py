"""Loading cost (issue 29, part 5): a second cosim.FMU of the same content reuses the unpacked archive and the
parsed model description (cosim/_fmu_cache.py)."""
import os
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


@pytest.fixture(scope="module")
def fmu(tmp_path_factory):
    return build.build_fmu(tmp_path_factory.mktemp("loading"), 2, 2)


@pytest.fixture(scope="module")
def mass1(tmp_path_factory):
    return build.build_fmu(tmp_path_factory.mktemp("loading1"), 1, 2)


def _counted(real, name, calls):
    def call(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)
    return call


@pytest.mark.parametrize("kind", ["cs", "me"])
def test_second_load_neither_unzips_nor_hashes_nor_parses(fmu, kind, monkeypatch):
    """What makes a second load cheap (its time is measured in benchmarks/fmu.py, `loading`: 0.12 ms CS, 0.16 ms
    ME against 14-20 ms before): one os.stat finds the digest, the unpacked files and the parsed model description
    are reused, and the binary is the library already loaded."""
    import fmpy
    from cosim import _archive, _fmu_cache
    first = cosim.FMU(fmu, kind=kind)
    calls = []
    for owner, name in ((_fmu_cache, "_sha256"), (_fmu_cache, "_unpack"), (_archive, "extract"),
                        (_archive, "parse_xml"), (fmpy, "read_model_description")):
        monkeypatch.setattr(owner, name, _counted(getattr(owner, name), name, calls))
    again = cosim.FMU(fmu, kind=kind)
    assert calls == []
    assert again._dir == first._dir
    entry = _fmu_cache.unpacked(fmu, 1 << 30)
    assert len(entry.pins) >= 1 and len(entry.binaries) == 1
    # a changed file (another mtime) is hashed again, and found by its digest without unpacking again
    os.utime(fmu, ns=(os.stat(fmu).st_atime_ns, os.stat(fmu).st_mtime_ns + 1_000_000))
    cosim.FMU(fmu, kind=kind)
    assert calls == ["_sha256"]


def test_cache_is_keyed_by_content(fmu, tmp_path):
    a = cosim.FMU(fmu, kind="cs")
    copy = shutil.copy(fmu, tmp_path / "copy.fmu")
    assert cosim.FMU(copy, kind="cs")._dir == a._dir          # the same bytes elsewhere: the same unpacked files
    changed = tmp_path / "changed.fmu"
    with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(changed, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "modelDescription.xml":
                data = data.replace(b'start="1e-10"', b'start="2e-10"') + b"\n"
            zout.writestr(info, data)
    b = cosim.FMU(changed, kind="cs")
    assert b._dir != a._dir
    # results do not depend on the cache: a fresh and a cached object run alike
    s1 = cosim.CoupledSystem([cosim.FMU(fmu, kind="cs", name="S")], [], allow_unconnected=True)
    s2 = cosim.CoupledSystem([a.__class__(fmu, kind="cs", name="S")], [], allow_unconnected=True)
    r1, r2 = cosim.simulate(s1, t_end=0.01, H=1e-3), cosim.simulate(s2, t_end=0.01, H=1e-3)
    assert (r1.Y == r2.Y).all()


def test_closing_one_object_keeps_the_files_of_the_others(fmu):
    a = cosim.FMU(fmu, kind="cs", name="A")
    b = cosim.FMU(fmu, kind="cs", name="B")
    a.close()
    res = cosim.simulate(cosim.CoupledSystem([b], [], allow_unconnected=True), t_end=0.01, H=1e-3)
    assert res.success and pathlib.Path(b._dir, "modelDescription.xml").is_file()


@pytest.mark.parametrize("kind", ["cs", "me"])
def test_set_between_runs_changes_the_next_run(mass1, kind):
    """fmu.set(name, value) between runs acts as start_values at construction (ME: x0 follows)."""
    changed = cosim.FMU(mass1, kind=kind, name="S", start_values={"c": 2e7, "m": 5.0})
    plain = cosim.FMU(mass1, kind=kind, name="S")
    run = lambda f: cosim.simulate(cosim.CoupledSystem([f], [], allow_unconnected=True), t_end=0.01, H=1e-3,  # noqa
                                   solver=cosim.RK4(substeps=10))
    before = run(plain)
    plain.set("m", 5.0)
    plain.set("c", 2e7)
    assert plain.start_values == {"m": 5.0, "c": 2e7}
    np.testing.assert_array_equal(run(plain).Y, run(changed).Y)
    assert not np.array_equal(run(plain).Y, before.Y)
    with pytest.raises(ValueError, match="unknown variable 'nope'"):
        plain.set("nope", 1.0)
    with pytest.raises(ValueError, match=r"start_values\['n_steps'\]"):
        plain.set("n_steps", 1.5)
    assert plain.start_values == {"m": 5.0, "c": 2e7}
    if kind == "me":
        plain.set("x", 0.3)
        assert plain.x0[0] == 0.3


def test_default_experiment_is_read(fmu):
    assert cosim.FMU(fmu, kind="cs").default_experiment == {"start_time": 0.0, "stop_time": 0.1, "step_size": 1e-4}
