#!/usr/bin/env bash
# make wheel: the sdist, then from it one wheel per interpreter, repaired by auditwheel so that it carries
# SUNDIALS, KLU (SuiteSparse), LAPACK/BLAS and libgfortran and is tagged manylinux (2_34: packaging/glibc_compat.h).
# Output: dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
. packaging/common.sh
tools_venv
rm -rf dist build/wheels && mkdir -p dist build/wheels
start=$(date +%s)
"$TOOLS/bin/python" -m build --sdist --outdir dist . >build/wheels/sdist.log 2>&1 || { cat build/wheels/sdist.log; exit 1; }
sdist=$(ls dist/cosim-*.tar.gz)
# Every interpreter's build at once (each compiles serially): from the sdist, not the tree, which proves that the
# sdist holds everything the build needs.
# COSIM_MPI=0: a wheel cannot carry the MPI of the machine it runs on (cosim._mpi must link the MPI that mpi4py
# uses there), so the wheels leave the optional MPI extension out; cosim.MPI then says to build from source.
for v in $PYVERSIONS; do
  py=$(find_python "$v")
  COSIM_MPI=0 CPPFLAGS="${CPPFLAGS:-} -include $PWD/packaging/glibc_compat.h" \
    "$py" -m pip wheel -q --no-deps -w "build/wheels/raw-$v" "$sdist" >"build/wheels/build-$v.log" 2>&1 &
done
for v in $PYVERSIONS; do
  wait -n || { cat build/wheels/build-*.log; exit 1; }
done
for v in $PYVERSIONS; do
  PATH="$PWD/$TOOLS/bin:$PATH" auditwheel repair -w dist build/wheels/raw-"$v"/cosim-*.whl >>"build/wheels/build-$v.log" 2>&1 \
    || { cat "build/wheels/build-$v.log"; exit 1; }
done
ls -l dist
echo "make wheel: $(( $(date +%s) - start )) s"
