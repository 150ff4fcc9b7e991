"""Worker of the API fuzz (tests/test_fuzz.py): runs a batch of generated calls and reports each one.

Usage: ``python fuzz_worker.py CALLS.pkl REPORT.jsonl``. CALLS.pkl is a pickled list of call descriptions (plain
data only: numbers, strings, lists, NumPy arrays and tagged tuples that this worker turns into callbacks,
subsystems, systems, solvers and approximations). For every call the worker appends ``{"i": i, "start": true}``
to REPORT before running it and ``{"i": i, "outcome": ..., "type": ..., "msg": ...}`` after it, written
unbuffered, so that when the process crashes (segfault, sanitizer abort) or hangs the parent knows which call did
it.

Outcomes: "ok" (returned), "raised" (one of the allowed exception types with a non-empty message) and "bad"
(anything else: another type, or an empty message). A call description is a dict

    {"fn": "cosim.simulate", "args": [...], "kwargs": {...}, "ops": [(name, args, kwargs), ...]}

``fn`` is a dotted name under ``cosim``; ``ops`` are then applied to the returned object in order: a method call
(args/kwargs given), or an attribute read (args None). ``("ret", j)`` in an op's arguments stands for the value
returned by op j of the same call (e.g. restore a snapshot taken by an earlier ``save``).
"""
import ctypes
import json
import os
import pickle
import sys
import warnings

import numpy as np

import cosim
import cosim.analysis
import cosim.sysid

try:  # NumPy >= 1.25
    from numpy.exceptions import ComplexWarning
except ImportError:  # pragma: no cover
    from numpy import ComplexWarning

ALLOWED = (ValueError, TypeError, MemoryError, cosim.CosimError, np.linalg.LinAlgError)


def allowed(exc):
    """The property: only these exception types, each with a non-empty message. ArithmeticError itself is the
    documented mapping of CS_ERR_LINALG (singular matrix, non-converged eigenvalues), but its other subclasses
    (OverflowError, ZeroDivisionError, FloatingPointError) are leaks of internals."""
    ok = isinstance(exc, ALLOWED) or type(exc) is ArithmeticError
    return ok and bool(str(exc).strip())


# ----------------------------------------------------------------------------------------------- builders

def _callback(kind, n):
    """A Python callback f(t, x, u[, udot]) returning n values, well or badly behaved."""
    def f(t, x, u, *rest):
        base = np.zeros(n)
        m = min(n, len(x))
        base[:m] = -np.asarray(x)[:m]
        if len(u) and n:
            base[0] += float(np.sum(u))
        if kind == "ok":
            return base
        if kind == "raise":
            raise RuntimeError("fuzz callback failure")
        if kind == "raise_value":
            raise ValueError("fuzz callback value error")
        if kind == "wrong_shape":
            return np.zeros(n + 1)
        if kind == "short":
            return np.zeros(max(n - 1, 0))
        if kind == "nan":
            return np.full(n, np.nan)
        if kind == "inf":
            return np.full(n, np.inf)
        if kind == "huge":
            return np.full(n, 1e308)
        if kind == "none":
            return None
        if kind == "str":
            return "abc"
        if kind == "complex":
            return base + 1j
        if kind == "list":
            return [float(v) for v in base]
        if kind == "2d":
            return base.reshape(-1, 1)
        if kind == "object":
            return object()
        if kind == "nan_late":  # fine at first, NaN after t > 0.05
            return base if t <= 0.05 else np.full(n, np.nan)
        raise AssertionError(kind)
    return f


_CFUNC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                          ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)
_KEEP = []   # ctypes callbacks must outlive every run that uses them


def _cmodel(nx, nu, ny, mode, kw):
    """A CModel with real ctypes callbacks (only sizes and behaviour vary: random addresses would legitimately
    crash, as any wrong C pointer does). mode: "ok", "fail" (returns -1), "nan"."""
    def rhs(t, x, u, xdot, ud):
        for i in range(nx):
            xdot[i] = float("nan") if mode == "nan" else -x[i] + (u[0] if nu else 0.0)
        return -1 if mode == "fail" else 0

    def out(t, x, u, y, ud):
        for i in range(ny):
            y[i] = x[i % nx] if nx else 0.0
        return 0
    r, o = _CFUNC(rhs), _CFUNC(out)
    _KEEP.extend([r, o])
    return cosim.CModel(r, o, nx, nu, ny, **kw)


def build(v, rets):
    """Turn the plain-data description v into the objects the call needs."""
    if isinstance(v, list):
        return [build(x, rets) for x in v]
    if isinstance(v, dict):
        return {k: build(x, rets) for k, x in v.items()}
    if not isinstance(v, tuple) or not v or not isinstance(v[0], str):
        return v
    tag = v[0]
    if tag == "tuple":
        return tuple(build(x, rets) for x in v[1])
    if tag == "ret":
        return rets[v[1]]
    if tag == "cb":
        return _callback(v[1], v[2])
    if tag == "obj":
        return object()
    if tag == "sub":
        kind, kw = v[1], build(v[2], rets)
        if kind == "lti":
            return cosim.LTI(**kw)
        if kind == "ode":
            return cosim.ODE(**kw)
        if kind == "cmodel":
            return _cmodel(kw.pop("nx"), kw.pop("nu"), kw.pop("ny"), kw.pop("mode"), kw)
        raise AssertionError(kind)
    if tag == "system":
        subs = build(v[1], rets)
        conns = [cosim.connect(*build(c, rets)) for c in v[2]]
        return cosim.CoupledSystem(subs, conns)
    if tag in ("solver", "scheme"):
        return getattr(cosim, v[1])(**build(v[2], rets))
    if tag == "approx":
        return getattr(cosim, v[1])(*build(v[2], rets))
    if tag == "wild_cmodel":   # only for the harness self-test: passes validation, crashes when run
        return cosim.CModel(8, 8, 1, 1, 1)
    if tag == "stepper_save":   # a snapshot of another stepper (maybe of other sizes)
        st = cosim.Stepper(build(v[1], rets), build(v[2], rets))
        return st.save()
    return v


def resolve(name):
    obj = cosim
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def run_call(call):
    rets = []
    obj = resolve(call["fn"])(*build(call.get("args", []), rets), **build(call.get("kwargs", {}), rets))
    for name, args, kwargs in call.get("ops", []):
        if args is None:
            rets.append(getattr(obj, name))
        else:
            rets.append(getattr(obj, name)(*build(args, rets), **build(kwargs, rets)))
    return obj


def main():
    calls_path, report_path = sys.argv[1], sys.argv[2]
    with open(calls_path, "rb") as f:
        calls = pickle.load(f)
    warnings.simplefilter("ignore")                 # e.g. MOESP's "unreliable" RuntimeWarning
    warnings.simplefilter("error", ComplexWarning)  # a silently dropped imaginary part is a defect
    fd = os.open(report_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def report(d):
        os.write(fd, (json.dumps(d) + "\n").encode())

    for i, call in enumerate(calls):
        report({"i": i, "start": True})
        try:
            run_call(call)
            d = {"i": i, "outcome": "ok"}
        except BaseException as exc:  # noqa: BLE001 - the point is to classify every exception
            if isinstance(exc, KeyboardInterrupt):
                raise
            d = {"i": i, "outcome": "raised" if allowed(exc) else "bad", "type": type(exc).__qualname__,
                 "module": type(exc).__module__, "msg": str(exc)[:500]}
        report(d)
    os.close(fd)


if __name__ == "__main__":
    main()
