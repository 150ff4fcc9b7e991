"""Containment of FMU and SSP archives (issue 29, part 7; docs/fmu.md "Containment"): nothing named inside an
archive reaches outside it, extraction is bounded, and the XML parsers expand no entities."""
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

import cosim
from cosim import _archive

pytest.importorskip("fmpy")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
import build  # noqa: E402
from test_fmu import SSD, SSV  # noqa: E402  (the oscillator SSP of tests/test_fmu.py)

if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler for the test FMUs", allow_module_level=True)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("contain")
    return {1: build.build_fmu(d, 1, 2), 2: build.build_fmu(d, 2, 2)}


def rewrite(src, dst, md=None, extra=()):
    """A copy of the FMU ``src`` with its modelDescription.xml passed through ``md`` and ``extra`` members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "modelDescription.xml" and md:
                data = md(data.decode()).encode()
            zout.writestr(info, data)
        for name, data in extra:
            zout.writestr(name, data)
    return dst


@pytest.fixture
def evil_library(tmp_path):
    """A shared library outside any archive whose constructor writes a marker file when it is loaded."""
    marker = tmp_path / "constructor_ran"
    src = tmp_path / "evil.c"
    src.write_text('#include <stdio.h>\n__attribute__((constructor)) static void run(void) {\n'
                   f'    FILE *f = fopen("{marker}", "w"); if (f) {{ fputs("ran", f); fclose(f); }}\n}}\n')
    cc = next(c for c in ("cc", "gcc", "clang") if shutil.which(c))
    lib = tmp_path / "evil.so"
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    return lib, marker


@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_model_identifier_cannot_load_a_library_outside_the_archive(fmus, tmp_path, evil_library, how):
    lib, marker = evil_library
    stem = str(lib)[:-3]
    ident = ("../" * 12 + stem.lstrip("/")) if how == "relative" else stem
    bad = rewrite(fmus[1], tmp_path / "evil.fmu", md=lambda s: s.replace('modelIdentifier="Mass1"',
                                                                         f'modelIdentifier="{ident}"'))
    with pytest.raises(ValueError, match="modelIdentifier .* is not a plain file name"):
        cosim.FMU(bad, kind="cs")
    assert not marker.exists()


def test_binary_symlinked_out_of_an_unpacked_archive_is_refused(tmp_path, evil_library):
    lib, marker = evil_library
    root = tmp_path / "unpacked"
    (root / "binaries" / "linux64").mkdir(parents=True)
    os.symlink(lib, root / "binaries" / "linux64" / "Mass1.so")
    with pytest.raises(ValueError, match="points outside the archive"):
        _archive.inside(root, "binaries/linux64/Mass1.so", "binary")
    assert not marker.exists()


def ssp_with(tmp_path, ssd, fmus, name="x.ssp"):
    ssp = tmp_path / name
    with zipfile.ZipFile(ssp, "w") as z:
        z.writestr("SystemStructure.ssd", ssd)
        z.write(fmus[1], "resources/Mass1.fmu")
        z.write(fmus[2], "resources/Mass2.fmu")
        z.writestr("resources/S2.ssv", SSV)
    return ssp


@pytest.mark.parametrize("source", ["../outside/Mass1.fmu", "{abs}", "file://{abs}", "file:{abs}",
                                    "resources/..%2F..%2Foutside/Mass1.fmu", "http://example.com/Mass1.fmu"])
def test_ssp_component_source_stays_inside_the_archive(fmus, tmp_path, source):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(fmus[1], outside / "Mass1.fmu")
    src = source.format(abs=outside / "Mass1.fmu")
    ssd = SSD.replace('source="resources/Mass1.fmu"', f'source="{src}"')
    with pytest.raises(ValueError, match="source of component 'S1'"):
        cosim.CoupledSystem.from_ssp(ssp_with(tmp_path, ssd, fmus))
    # the same in an unpacked SSP directory
    d = tmp_path / "dir"
    with zipfile.ZipFile(ssp_with(tmp_path, ssd, fmus, "y.ssp")) as z:
        z.extractall(d)
    with pytest.raises(ValueError, match="source of component 'S1'"):
        cosim.CoupledSystem.from_ssp(d)


@pytest.mark.parametrize("source", ["../../etc/passwd", "/etc/passwd", "file:///etc/passwd"])
def test_ssp_parameter_binding_source_stays_inside_the_archive(fmus, tmp_path, source):
    ssd = SSD.replace('ParameterBinding source="resources/S2.ssv"', f'ParameterBinding source="{source}"')
    with pytest.raises(ValueError, match="parameter binding source of component 'S2'"):
        cosim.CoupledSystem.from_ssp(ssp_with(tmp_path, ssd, fmus))


def test_extraction_size_limit(fmus, tmp_path, monkeypatch):
    """2 MiB of zeros compress to a few KiB: refused under a 1 MiB limit before anything is written."""
    big = rewrite(fmus[1], tmp_path / "big.fmu", extra=[("resources/zeros.bin", bytes(2 << 20))])
    assert big.stat().st_size < 200_000
    with pytest.raises(ValueError, match=r"unpacks to \d+ bytes, more than the limit of 1048576 bytes"):
        cosim.FMU(big, kind="cs", max_unpacked=1 << 20)
    monkeypatch.setattr(_archive, "MAX_UNPACKED", 1 << 20)   # the default applies where none is given
    with pytest.raises(ValueError, match="more than the limit"):
        cosim.FMU(big, kind="cs")
    ssp = ssp_with(tmp_path, SSD, {1: big, 2: fmus[2]})
    with pytest.raises(ValueError, match="more than the limit"):
        cosim.CoupledSystem.from_ssp(ssp)
    monkeypatch.undo()
    assert cosim.FMU(big, kind="cs", max_unpacked=4 << 20).nu == 1
    for bad, error in ((0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), ("1", TypeError)):
        with pytest.raises(error, match="max_unpacked"):
            cosim.FMU(big, kind="cs", max_unpacked=bad)


LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
          + "".join(f'<!ENTITY lol{k} "{("&lol%s;" % (k - 1 if k > 1 else "")) * 10}">' for k in range(1, 10))
          + ']>\n')
EXTERNAL = '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">]>\n'


@pytest.mark.parametrize("prolog", [LAUGHS, EXTERNAL], ids=["billion_laughs", "external_entity"])
def test_xml_entities_are_refused(fmus, tmp_path, prolog):
    ref = "&lol9;" if prolog is LAUGHS else "&ext;"
    bad = rewrite(fmus[1], tmp_path / "bomb.fmu",
                  md=lambda s: prolog + s.split("?>", 1)[1].replace('modelName="Mass1"', f'modelName="{ref}"'))
    with pytest.raises(ValueError, match="modelDescription.xml .*refused"):
        cosim.FMU(bad, kind="cs")
    ssd = prolog + SSD.split("?>", 1)[1].replace('<ssd:Component name="S1"', f'<ssd:Component name="S1{ref}"')
    with pytest.raises(ValueError, match="SystemStructure.ssd refused"):
        cosim.CoupledSystem.from_ssp(ssp_with(tmp_path, ssd, fmus))


def test_scheduled_execution_only_fmu_is_named_in_the_refusal(tmp_path):
    """Issue 29: an FMI 3 FMU that offers only ScheduledExecution (clocks) was refused with "it offers none"; the
    message names what it offers and that cosim does not support it."""
    import re
    src = build.build_fmu(tmp_path, 1, 3)
    clocked = rewrite(src, tmp_path / "clocked.fmu",
                      md=lambda s: re.sub(r"<CoSimulation ", "<ScheduledExecution ", s))
    for kind in ("cs", None):
        with pytest.raises(ValueError, match=r"offers scheduled execution \(FMI 3 clocks; not supported by cosim\)"):
            cosim.FMU(clocked, kind=kind) if kind else cosim.FMU(clocked)
