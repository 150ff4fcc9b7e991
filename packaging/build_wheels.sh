#!/usr/bin/env bash
# make wheel: the sdist, then from it one wheel per interpreter, repaired by auditwheel so that it carries
# SUNDIALS, KLU (SuiteSparse), LAPACK/BLAS and libgfortran and is tagged manylinux. Output: dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
. packaging/common.sh
tools_venv
rm -rf dist build/wheels && mkdir -p dist build/wheels
"$TOOLS/bin/python" -m build --sdist --outdir dist . >build/wheels/sdist.log 2>&1
sdist=$(ls dist/cosim-*.tar.gz)
for v in $PYVERSIONS; do
  py=$(find_python "$v")
  start=$(date +%s)
  # from the sdist, not the tree: proves the sdist holds everything the build needs
  "$py" -m pip wheel -q --no-deps -w build/wheels/raw "$sdist" >"build/wheels/build-$v.log" 2>&1 \
    || { cat "build/wheels/build-$v.log"; exit 1; }
  raw=$(ls build/wheels/raw/cosim-*-cp${v/./}-*.whl)
  PATH="$PWD/$TOOLS/bin:$PATH" auditwheel repair -w dist "$raw" >>"build/wheels/build-$v.log" 2>&1 \
    || { cat "build/wheels/build-$v.log"; exit 1; }
  echo "wheel $v: $(ls dist/cosim-*-cp${v/./}-*.whl | xargs basename) ($(( $(date +%s) - start )) s)"
done
ls -l dist
