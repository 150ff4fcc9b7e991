#!/usr/bin/env bash
# Run "$@" where the system's SUNDIALS, SuiteSparse, LAPACK/BLAS and gfortran libraries and the source tree's
# cosim/ package cannot be loaded: this re-executes itself in a private mount namespace (unshare -m, root) and
# bind-mounts an empty file over each library file and an empty folder over cosim/. Checks that it worked.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIBS='libsundials_|libklu|libamd|libcamd|libcolamd|libccolamd|libbtf|libsuitesparseconfig|libcholmod|libumfpack'
LIBS+='|libspqr|libcxsparse|liblapack|libblas|libopenblas|libgfortran|libquadmath'
if [ -z "${COSIM_HIDDEN:-}" ]; then
  exec unshare -m --propagation private env COSIM_HIDDEN=1 "$0" "$@"
fi
empty_file=$(mktemp) && empty_dir=$(mktemp -d)
ldconfig -p | awk '{print $NF}' | grep -E "/($LIBS)[^/]*$" | xargs -r readlink -f | sort -u | while read -r f; do
  mount --bind "$empty_file" "$f"
done
mount --bind "$empty_dir" "$ROOT/cosim"
# every hidden soname must now fail to load
ldconfig -p | awk '{print $1}' | grep -E "^($LIBS)" | sort -u | python3 -c "
import ctypes, sys
for so in sys.stdin.read().split():
    try:
        ctypes.CDLL(so)
    except OSError:
        continue
    sys.exit(f'hide_system_libs: {so} still loads')"
exec "$@"
