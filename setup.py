"""Build the single C extension ``cosim._core`` from every ``csrc/**/*.c``.

Links LAPACK/BLAS (dense linear algebra), SUNDIALS CVODE (stiff/non-stiff ODE integration) and SuiteSparse KLU
(sparse LU of the coupling loop I - D L, so the update of N coupled units costs O(N)).
Before compiling, a probe compiles and links one tiny program per library: where one is missing the build stops
with one message naming the packages to install (Debian/Ubuntu, Fedora, conda, Homebrew) instead of a gcc error.
``COSIM_SANITIZE=1`` builds with AddressSanitizer/UBSan, without -fwrapv (``make asan``, ``make fuzz-asan``).
``COSIM_BLAS=scipy-openblas32`` links the OpenBLAS of SciPy's wheels (PyPI ``scipy-openblas32``) instead of the
reference LAPACK/BLAS (only ``benchmarks/blas.py`` uses it: it changes the last bits of some results).
The optional extension ``cosim._mpi`` (units distributed over MPI ranks, docs/chains.md) is built only where
``mpicc`` reports an MPI library (``COSIM_MPI=0`` skips it, ``COSIM_MPI=1`` makes a failure to build it an error);
it links the MPI that ``mpicc`` names, which must be the one mpi4py uses.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# the MPI glue goes into cosim._mpi only (the core links no MPI)
MPI_SOURCES = ["csrc/parallel/mpi_exchange.c", "csrc/py/mpi_module.c"]
sources = sorted(set(glob.glob("csrc/**/*.c", recursive=True)) - set(MPI_SOURCES))
headers = sorted(glob.glob("csrc/**/*.h", recursive=True))
extra_compile = ["-std=c11", "-O3", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-Wno-format-truncation"]
extra_link = []
if os.environ.get("COSIM_SANITIZE"):
    # Python's own CFLAGS carry -fwrapv, which defines signed overflow and so hides it from UBSan: -fno-wrapv (later
    # on the command line, so it wins) restores the C semantics the sanitizer checks. float-cast-overflow catches
    # out-of-range double -> integer conversions (e.g. a micro-step count), which -fsanitize=undefined omits.
    sanitizers = "address,undefined,float-cast-overflow"
    extra_compile += ["-O1", "-g", "-fno-omit-frame-pointer", "-fno-wrapv", f"-fsanitize={sanitizers}",
                      "-fno-sanitize-recover=undefined,float-cast-overflow"]
    extra_link += [f"-fsanitize={sanitizers}"]

SUNDIALS_LIBS = ["sundials_cvode", "sundials_nvecserial", "sundials_sunmatrixdense", "sundials_sunlinsoldense",
                 "sundials_sunmatrixband", "sundials_sunlinsolband"]
blas_libs, blas_dirs, blas_macros = ["lapack", "blas"], [], []
if os.environ.get("COSIM_BLAS", "reference") == "scipy-openblas32":
    import scipy_openblas32  # pip install scipy-openblas32: its symbols carry the prefix scipy_
    blas_libs, blas_dirs = [scipy_openblas32.get_library()], [scipy_openblas32.get_lib_dir()]
    called = {name for path in sources + headers
              for name in re.findall(r"\b([dz][a-z0-9]{3,6}_)\s*\(", open(path, encoding="utf-8").read())}
    blas_macros = [(name, "scipy_" + name) for name in sorted(called)]

# One probe per library: (what, headers it must find, libraries it must link, extra C lines).
PROBES = [
    ("SUNDIALS CVODE >= 6", ["cvode/cvode.h", "nvector/nvector_serial.h", "sundials/sundials_context.h",
                             "sunlinsol/sunlinsol_dense.h", "sunlinsol/sunlinsol_band.h",
                             "sunmatrix/sunmatrix_dense.h", "sunmatrix/sunmatrix_band.h"],
     SUNDIALS_LIBS, "#if SUNDIALS_VERSION_MAJOR < 6\n#error SUNDIALS too old\n#endif\n"),
    ("SuiteSparse KLU", ["suitesparse/klu.h"], ["klu"], ""),
    ("LAPACK/BLAS", [], blas_libs, "extern void dgetrf_(void);\nextern void dgemm_(void);\n"
                                   "void (*volatile cosim_probe[])(void) = {dgetrf_, dgemm_};\n"),
]
MISSING_MESSAGE = """
cosim: cannot build the C core: {missing} not found (headers or library).
Install the development packages, then build again:
  Debian/Ubuntu:  sudo apt-get install gcc libsundials-dev libsuitesparse-dev liblapack-dev libblas-dev
  Fedora:         sudo dnf install gcc sundials-devel suitesparse-devel lapack-devel blas-devel
  conda:          conda install -c conda-forge c-compiler sundials suitesparse liblapack libblas
                  (then: export CPATH=$CONDA_PREFIX/include LIBRARY_PATH=$CONDA_PREFIX/lib)
  Homebrew:       brew install sundials suite-sparse lapack
                  (then: export CPATH=$(brew --prefix)/include LIBRARY_PATH=$(brew --prefix)/lib)
Elsewhere, point CPATH/LIBRARY_PATH (or CFLAGS=-I... LDFLAGS=-L...) at SUNDIALS 6, KLU and LAPACK.
A cosim wheel (make wheel) carries these libraries and needs none of them.
"""


def mpi_flags():
    """(include_dirs, library_dirs, libraries, extra_link_args) of the MPI that ``mpicc`` wraps, or None."""
    mpicc = os.environ.get("MPICC") or shutil.which("mpicc")
    if os.environ.get("COSIM_MPI") == "0" or not mpicc:
        return None
    words = []
    for args in (["--showme:compile"], ["--showme:link"]):   # Open MPI
        try:
            out = subprocess.run([mpicc, *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        if out.returncode:
            break
        words += shlex.split(out.stdout)
    else:
        return _split_flags(words)
    try:  # MPICH and derivatives: the whole compiler line
        out = subprocess.run([mpicc, "-show"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return _split_flags(shlex.split(out.stdout)[1:]) if out.returncode == 0 and out.stdout.strip() else None


def _split_flags(words):
    inc, libdirs, libs, link = [], [], [], []
    for w in words:
        if w.startswith("-I"):
            inc.append(w[2:])
        elif w.startswith("-L"):
            libdirs.append(w[2:])
        elif w.startswith("-l"):
            libs.append(w[2:])
        elif w.startswith("-Wl,") or w == "-pthread":
            link.append(w)
    return inc, libdirs, libs, link


class BuildExtWithProbe(build_ext):
    """build_ext that first checks, with the configured compiler, that each native dependency compiles and links."""

    def build_extensions(self):
        missing = [what for what, hdrs, libs, extra in PROBES if not self._probe(hdrs, libs, extra)]
        if missing:
            sys.exit(MISSING_MESSAGE.format(missing=", ".join(missing)))
        super().build_extensions()

    def build_extension(self, ext):
        if ext.name != "cosim._mpi":
            return super().build_extension(ext)
        try:  # optional: without it cosim works and simulate(parallel=cosim.MPI()) says what is missing
            super().build_extension(ext)
        except Exception as exc:
            if os.environ.get("COSIM_MPI") == "1":
                raise
            print(f"cosim: the optional MPI extension cosim._mpi was not built ({exc})", file=sys.stderr)

    def _probe(self, hdrs, libs, extra):
        ext = self.extensions[0]
        code = "".join(f"#include <{h}>\n" for h in hdrs) + extra + "int main(void) { return 0; }\n"
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write(code)
            saved = os.dup(2)  # the compiler's own error is not the message: silence it
            try:
                with open(os.devnull, "w") as null:
                    os.dup2(null.fileno(), 2)
                    objs = self.compiler.compile([src], output_dir=tmp, include_dirs=ext.include_dirs,
                                                 macros=ext.define_macros)
                    # LDFLAGS as the extension's link gets them (setuptools adds them to the shared-object
                    # linker only): a probe without them misses libraries that LDFLAGS=-L... points at
                    self.compiler.link_executable(objs, os.path.join(tmp, "probe"), libraries=libs,
                                                  library_dirs=ext.library_dirs,
                                                  extra_postargs=shlex.split(os.environ.get("LDFLAGS", "")))
                return True
            except Exception:
                return False
            finally:
                os.dup2(saved, 2)
                os.close(saved)


core = Extension(
    "cosim._core",
    sources=sources,
    depends=headers,
    include_dirs=["csrc", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"), ("_POSIX_C_SOURCE", "200809L")] + blas_macros,
    libraries=SUNDIALS_LIBS + ["klu"] + blas_libs + ["m", "pthread", "dl"],  # dl: dlopen of FMU binaries (csrc/fmi)
    library_dirs=blas_dirs,
    runtime_library_dirs=blas_dirs,
    extra_compile_args=extra_compile,
    extra_link_args=extra_link,
)

extensions = [core]
_mpi = mpi_flags()
if _mpi:
    extensions.append(Extension(
        "cosim._mpi",
        sources=["csrc/common.c", *MPI_SOURCES],
        depends=["csrc/common.h", "csrc/parallel/share.h", "csrc/parallel/mpi_exchange.h"],
        include_dirs=["csrc", *_mpi[0]],
        library_dirs=_mpi[1],
        runtime_library_dirs=_mpi[1],
        libraries=_mpi[2],
        extra_compile_args=extra_compile,
        extra_link_args=extra_link + _mpi[3],
    ))
elif os.environ.get("COSIM_MPI") == "1":
    sys.exit("cosim: COSIM_MPI=1 but no MPI found (mpicc): apt-get install libopenmpi-dev openmpi-bin")

setup(ext_modules=extensions, cmdclass={"build_ext": BuildExtWithProbe})
