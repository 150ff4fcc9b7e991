"""Build the single C extension ``cosim._core`` from every ``csrc/**/*.c``.

Links LAPACK/BLAS (dense linear algebra), SUNDIALS CVODE (stiff/non-stiff ODE integration) and SuiteSparse KLU
(sparse LU of the coupling loop I - D L, so the update of N coupled units costs O(N)).
``COSIM_SANITIZE=1`` builds with AddressSanitizer/UBSan, without -fwrapv (``make asan``, ``make fuzz-asan``).
"""
import glob
import os

import numpy
from setuptools import Extension, setup

sources = sorted(glob.glob("csrc/**/*.c", recursive=True))
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

core = Extension(
    "cosim._core",
    sources=sources,
    depends=headers,
    include_dirs=["csrc", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"), ("_POSIX_C_SOURCE", "200809L")],
    libraries=["sundials_cvode", "sundials_nvecserial", "sundials_sunmatrixdense",
               "sundials_sunlinsoldense", "sundials_sunmatrixband", "sundials_sunlinsolband", "klu", "lapack", "blas",
               "m", "pthread", "dl"],  # dl: dlopen of FMU binaries (csrc/fmi)
    extra_compile_args=extra_compile,
    extra_link_args=extra_link,
)

setup(ext_modules=[core])
