#!/usr/bin/env bash
# make wheel-check: the wheels in dist/ (make wheel) on a machine that has none of their native libraries.
#  1. the sdist holds what the build needs, and building it without the SUNDIALS/KLU headers stops with the one
#     message that names the packages (no gcc error);
#  2. per interpreter: a fresh venv, the wheel with [test] installed, then the tests against the installed package
#     with the system's SUNDIALS, SuiteSparse, LAPACK/BLAS and gfortran hidden (packaging/hide_system_libs.sh):
#     the whole suite on the interpreters in WHEEL_CHECK_FULL (default: the newest), SUBSET on the others;
#  3. a venv with the core dependencies only: simulate, results, analysis, plots work, cosim.doe and cosim.FMU
#     name their extra (packaging/core_check.py); how many distributions the plain install brings.
set -euo pipefail
cd "$(dirname "$0")/.."
. packaging/common.sh
ROOT=$PWD
WORK=$ROOT/build/wheel-check
FULL=${WHEEL_CHECK_FULL:-${PYVERSIONS##* }}
# Installed-package subset: the native libraries (golden bits, LAPACK, KLU, CVODE, threads, FMU dlopen), the C
# messages, results/CSV, the command line and the DoE stack.
SUBSET="test_golden.py test_engine.py test_linalg.py test_c_messages.py test_results.py test_cli.py test_master.py
        test_fmu.py test_doe.py test_chains.py test_sysid.py test_implicit.py"
# Tests of the source tree itself (cosim/'s import graph, setup.py's library probe): they run in make test; here
# cosim/ is hidden and the venv has no setuptools.
SOURCE_ONLY="test_imports.py test_build_probe.py"
rm -rf "$WORK" && mkdir -p "$WORK"
t_start=$(date +%s)
failed=()
report=()
fail() { echo "wheel-check FAILED: $*" >&2; failed+=("$*"); }

# 1. sdist
sdist=$(ls dist/cosim-*.tar.gz)
tar tzf "$sdist" >"$WORK/sdist.txt"
for f in LICENSE README.md pyproject.toml setup.py MANIFEST.in csrc/common.h cosim/__init__.py; do
  grep -q "^cosim-[^/]*/$f$" "$WORK/sdist.txt" || fail "sdist lacks $f"
done
n_c=$(grep -c '/csrc/.*\.c$' "$WORK/sdist.txt"); n_h=$(grep -c '/csrc/.*\.h$' "$WORK/sdist.txt")
[ "$n_c" = "$(find csrc -name '*.c' | wc -l)" ] && [ "$n_h" = "$(find csrc -name '*.h' | wc -l)" ] \
  || fail "sdist holds $n_c .c / $n_h .h of csrc"
newest=$(find_python "${PYVERSIONS##* }")
empty=$(mktemp -d)
if unshare -m sh -c "mount --bind $empty /usr/include/sundials && mount --bind $empty /usr/include/suitesparse &&
     $newest -m pip wheel --no-deps -w $WORK/nohdr $sdist" >"$WORK/sdist-noheaders.log" 2>&1; then
  fail "the sdist built without the SUNDIALS/KLU headers"
elif grep -q "SUNDIALS CVODE >= 6, SuiteSparse KLU not found" "$WORK/sdist-noheaders.log" \
     && grep -q "Debian/Ubuntu: .*libsundials-dev libsuitesparse-dev" "$WORK/sdist-noheaders.log" \
     && grep -q "Fedora: .*sundials-devel" "$WORK/sdist-noheaders.log" && grep -q "conda: " "$WORK/sdist-noheaders.log" \
     && grep -q "Homebrew: .*suite-sparse" "$WORK/sdist-noheaders.log" \
     && ! grep -q "fatal error" "$WORK/sdist-noheaders.log"; then
  echo "sdist: complete ($n_c .c, $n_h .h); without the headers it stops with the message:"
  sed -n '/cannot build the C core/,/carries these libraries/p' "$WORK/sdist-noheaders.log" | sed 's/^/    /'
else
  cat "$WORK/sdist-noheaders.log"; fail "the sdist's build without headers did not print the message"
fi

# 2. per interpreter
for v in $PYVERSIONS; do
  py=$(find_python "$v")
  whl=$(ls dist/cosim-*-cp${v/./}-cp${v/./}-manylinux_*.whl)
  venv=$WORK/venv-$v
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1
  t=$(date +%s)
  "$venv/bin/python" -m pip install "$whl[test]" >"$WORK/install-$v.log" 2>&1 || { cat "$WORK/install-$v.log"; fail "$v: install"; continue; }
  t_install=$(( $(date +%s) - t ))
  if [[ " $FULL " == *" $v "* ]]; then
    tests="$ROOT/tests $(for f in $SOURCE_ONLY; do echo "--ignore=$ROOT/tests/$f"; done)"; what="all but $SOURCE_ONLY"; else
    tests=$(for f in $SUBSET; do echo "$ROOT/tests/$f"; done); what=subset; fi
  t=$(date +%s)
  # from $WORK, with the repository's cosim/ hidden: only the installed package can be imported
  (cd "$WORK" && "$ROOT/packaging/hide_system_libs.sh" "$venv/bin/python" -c "
import cosim, cosim._core as c, numpy, pandas, sys
libs = sorted({l.split('/')[-1] for l in open('/proc/self/maps').read().split() if '/cosim.libs/' in l})
assert '/site-packages/' in cosim.__file__ and len(libs) >= 5, (cosim.__file__, libs)
print(f'python {sys.version.split()[0]}: {cosim.__file__}, numpy {numpy.__version__}, pandas {pandas.__version__},',
      f'loads from cosim.libs: {\" \".join(libs)}')" \
   && "$ROOT/packaging/hide_system_libs.sh" "$venv/bin/python" -m pytest -p no:cacheprovider -c "$ROOT/pyproject.toml" \
        --rootdir "$ROOT" -rfE $tests) >"$WORK/test-$v.log" 2>&1 || true
  t_test=$(( $(date +%s) - t ))
  head -1 "$WORK/test-$v.log"
  grep -E "^(FAILED|ERROR) " "$WORK/test-$v.log" || true
  result=$(grep -E "^[0-9]+ (passed|failed|errors?)" "$WORK/test-$v.log" | tail -1 || true)
  if [ -z "$result" ] || grep -qE "[0-9]+ (failed|errors?)" <<<"$result"; then
    tail -n 40 "$WORK/test-$v.log"; fail "$v: tests: ${result:-no result}"
  fi
  echo "$v ($what): $result"
  report+=("$v  $(basename "$whl")  $(( $(stat -c %s "$whl") / 1024 )) KiB  install[test] ${t_install} s  tests ($what) ${t_test} s: $result")
done

# 3. core dependencies only (the oldest interpreter: the most requirements, tomli included)
v=${PYVERSIONS%% *}; py=$(find_python "$v")
whl=$(ls dist/cosim-*-cp${v/./}-cp${v/./}-manylinux_*.whl)
venv=$WORK/venv-core
"$py" -m venv "$venv" && "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1
t=$(date +%s)
"$venv/bin/python" -m pip install "$whl" >"$WORK/install-core.log" 2>&1 || { cat "$WORK/install-core.log"; fail "core: install"; }
t_install=$(( $(date +%s) - t ))
dists=$("$venv/bin/python" -m pip list --format=freeze 2>/dev/null | grep -v -E '^(pip|setuptools|cosim)==' | cut -d= -f1 | xargs)
direct=$("$venv/bin/python" -c "import importlib.metadata as m; print(' '.join(r.split(';')[0].split('>')[0] for r in m.requires('cosim') if 'extra ==' not in r))")
size=$(du -sm "$venv/lib" | cut -f1)
(cd "$WORK" && "$ROOT/packaging/hide_system_libs.sh" "$venv/bin/python" "$ROOT/packaging/core_check.py") \
  || fail "core-only venv: packaging/core_check.py"
report+=("core-only $v: install ${t_install} s, $size MB; requires ($(wc -w <<<"$direct")): $direct;" \
         "installs $(wc -w <<<"$dists") distributions besides cosim: $dists")

echo; echo "== wheel-check ($(( $(date +%s) - t_start )) s)"
printf '%s\n' "${report[@]}"
if [ ${#failed[@]} -gt 0 ]; then printf 'FAILED: %s\n' "${failed[@]}"; exit 1; fi
echo "wheel-check passed"
