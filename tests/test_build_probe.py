"""setup.py's probe of the native libraries sees what the build itself sees: a library that only LDFLAGS=-L...
points at (as the build failure message advises) is found."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not (ROOT / "setup.py").exists() or shutil.which("cc") is None,
                                reason="needs the source checkout's setup.py and a C compiler")

PROBE = """
import sys, setuptools
setuptools.setup = lambda **kw: None                     # setup.py's definitions only, no build
ns = {"__name__": "cosim_setup", "__file__": "setup.py"}
exec(compile(open("setup.py").read(), "setup.py", "exec"), ns)
from setuptools import Distribution
from setuptools._distutils.ccompiler import new_compiler
from setuptools._distutils.sysconfig import customize_compiler
cmd = ns["BuildExtWithProbe"](Distribution({"ext_modules": ns["extensions"]}))
cmd.ensure_finalized()
cmd.compiler = new_compiler()
customize_compiler(cmd.compiler)
found = cmd._probe([], ["cosimprobe"], "extern void cosim_probe_fn(void);\\nvoid (*volatile p)(void) = cosim_probe_fn;\\n")
print("found" if found else "missing")
"""


def test_probe_links_with_ldflags_library_dirs(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (tmp_path / "p.c").write_text("void cosim_probe_fn(void) {}\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib / "libcosimprobe.so"), str(tmp_path / "p.c")],
                   check=True)

    def probe(ldflags):
        env = {k: v for k, v in os.environ.items() if k not in ("LDFLAGS", "LIBRARY_PATH")}
        if ldflags:
            env["LDFLAGS"] = ldflags
        out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()[-1]

    assert probe(None) == "missing"                      # the control: the library is nowhere else
    assert probe(f"-L{lib}") == "found"
