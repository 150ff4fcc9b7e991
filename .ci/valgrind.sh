#!/usr/bin/env bash
# Memcheck a long run through every C path of cosim. The interpreter, NumPy and the dynamic loader report their own
# one-off allocations and benign reads; the check fails only on errors or definite leaks with a frame in cosim's
# extension (cosim/_core*.so, csrc/).
set -euo pipefail
log=$(mktemp)
PYTHONMALLOC=malloc valgrind --leak-check=full --errors-for-leak-kinds=definite --suppressions=.ci/python.supp \
  --num-callers=30 "$@" tests/leakcheck.py >"$log" 2>&1 || true
grep -q "leakcheck done" "$log" || { cat "$log"; echo "valgrind: the run did not finish"; exit 1; }
if awk '/^==[0-9]+== (Invalid|Conditional|Use of|[0-9,]+ (\([0-9,]+ direct, [0-9,]+ indirect\) )?bytes in [0-9,]+ blocks are definitely)/{blk=$0; p=1; next}
        p && /^==[0-9]+== $/{ if (blk ~ /cosim\/_core|csrc\//) { print blk; bad=1 } p=0; next }
        p {blk=blk "\n" $0}
        END{exit bad ? 0 : 1}' "$log"; then
  echo "valgrind: errors or leaks in cosim's C core (above)"; exit 1
fi
echo "valgrind: no errors or definite leaks in cosim's C core ($(grep -c 'definitely lost in loss' "$log" || true) interpreter-side reports ignored)"
rm -f "$log"
