#!/usr/bin/env bash
# On the many-core machine, from the repository root: install the bundle of prepare.sh (.device/, carried) into
# a private folder, then run benchmarks/doe.py's scaling over worker counts on Genser's §12.3 RLS study with the
# independent processes' ceiling and the Dask timeline. Prints the tables and writes them to $OUT/doe.txt.
#
#   OUT=/some/dir bash benchmarks/device/run.sh
# Knobs: COUNTS (1,2,4,8,16), RUNS (1764), REPEATS (2), BACKENDS (processes,dask), STUDY (rls), QUICK=1 (60 runs,
# counts 1,2: a check on a small machine), WALLS (0; K > 0 adds the wall times of K studies in a row at the largest
# count, the spread of the speed-up's numerator), TAIL_DIVISORS (with WALLS: e.g. 8,16,32, the studies alternate
# over these smallest last batches, runner.TAIL_DIVISOR), PY (python3).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/.device/out}
PY=${PY:-python3}
if [ "${QUICK:-0}" = 1 ]; then COUNTS=${COUNTS:-1,2}; RUNS=${RUNS:-60}; else COUNTS=${COUNTS:-1,2,4,8,16}; RUNS=${RUNS:-1764}; fi
WORK=$(mktemp -d)
mkdir -p "$OUT" "$WORK/site" "$WORK/benchmarks" "$WORK/examples"
echo "$(uname -n): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" -m pip install -q --no-index --no-deps --no-compile --disable-pip-version-check --target "$WORK/site" \
  "$ROOT"/.device/whl/*.whl
# the scripts outside the checkout, whose cosim/ has no compiled core there
cp "$ROOT/benchmarks/doe.py" "$WORK/benchmarks/"
cp "$ROOT/examples/genser_doe.py" "$WORK/examples/"
cd "$WORK"    # not the checkout: its cosim/ (no compiled core) would shadow the wheel
export PYTHONPATH="$WORK/site" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
"$PY" -c 'import cosim, dask, distributed, sys; print("python", sys.version.split()[0], "| cosim", cosim.__version__, cosim.__file__, "| distributed", distributed.__version__)'
"$PY" "$WORK/benchmarks/doe.py" --counts "$COUNTS" --study "${STUDY:-rls}" --runs "$RUNS" --repeats "${REPEATS:-2}" \
  --backends "${BACKENDS:-processes,dask}" --ceiling --timeline 2>&1 | tee "$OUT/doe.txt"
if [ "${WALLS:-0}" -gt 0 ]; then
  "$PY" "$WORK/benchmarks/doe.py" --counts "${COUNTS##*,}" --study "${STUDY:-rls}" --runs "$RUNS" --walls "$WALLS" \
    --backends "${BACKENDS:-processes,dask}" ${TAIL_DIVISORS:+--tail-divisors "$TAIL_DIVISORS"} 2>&1 \
    | tee -a "$OUT/doe.txt"
fi
