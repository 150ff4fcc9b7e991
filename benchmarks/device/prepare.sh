#!/usr/bin/env bash
# A bundle for measuring cosim's DoE scaling on a machine with many cores, Python 3.12 and no network (a lent
# 16-core machine): the project's cp312 manylinux wheel, which carries SUNDIALS, KLU and LAPACK (nothing to compile
# there), and the wheels of the DoE dependencies beyond NumPy, SciPy, pandas and statsmodels (Dask, SALib and all
# of theirs: an image that has some of them already is not relied on). Writes .device/ (git-ignored),
# which the run carries; run.sh beside this file measures.
#
#   bash benchmarks/device/prepare.sh          # from anywhere; builds dist/'s cp312 wheel if it is missing or
#                                              # older than the sources
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$ROOT/.device
grep -qx '/.device/' "$ROOT/.git/info/exclude" || echo '/.device/' >> "$ROOT/.git/info/exclude"
whl=$(ls "$ROOT"/dist/cosim-*-cp312-cp312-manylinux_*.whl 2>/dev/null | head -1 || true)
# a wheel older than the sources would measure old code there
if [ -n "$whl" ] && [ -n "$(cd "$ROOT" && find cosim csrc setup.py pyproject.toml -newer "$whl" -type f -print -quit)" ]; then
  echo "$(basename "$whl") is older than the sources: building it again"
  rm -f "$whl"
  whl=
fi
if [ -z "$whl" ]; then
  (cd "$ROOT" && make wheel PYVERSIONS=3.12)
  whl=$(ls "$ROOT"/dist/cosim-*-cp312-cp312-manylinux_*.whl | head -1)
fi
rm -rf "$D" && mkdir -p "$D/whl"
cp "$whl" "$D/whl/"
# the versions this checkout's .venv runs (the figures then compare like with like)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 -d "$D/whl" \
  dask==2026.8.0 distributed==2026.8.0 tornado==6.6.1 zict==3.0.0 tblib==3.2.2 locket==1.0.0 partd==1.4.2 \
  SALib==1.6.0 multiprocess==0.70.19 dill==0.4.1 click==8.5.1 cloudpickle==3.1.3 fsspec==2026.9.0 \
  packaging==26.4 jinja2==3.1.6 markupsafe==3.0.4 pyyaml==6.0.4 sortedcontainers==2.4.0 urllib3==2.8.0 \
  toolz==1.2.0 psutil==7.2.2 msgpack==1.2.4 tqdm==4.70.1 defusedxml==0.7.1
du -sh "$D"
