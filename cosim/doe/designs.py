"""Designs of experiments: the parameter table of a study, one row per run (index ``run`` = 0 … N−1).

* :func:`full_factorial`: every combination of the levels (Montgomery; genser2020 §12.1 with n = 1 replicate, the
  simulation being deterministic); the last factor varies fastest.
* :func:`latin_hypercube`: n runs, each factor's range cut into n strata hit once each (random pairing), sampled by
  ``scipy.stats.qmc.LatinHypercube`` (it replaced a hand-written sampler: a given seed now gives other points, so
  a checkpoint of an LHS study made before is refused as another study's).
* :func:`saltelli`: the Saltelli sample of Sobol' indices (SALib), N (k + 2) runs (N (2k + 2) with second-order
  indices); the order of the rows is SALib's, which :func:`cosim.doe.sobol` needs.
* :func:`explicit`: a given table (DataFrame, dict of columns or list of dicts).

Sampled designs take :class:`Range` factors (continuous) or level lists (a level drawn per unit sample:
index ⌊u·n_levels⌋). ``seed`` makes them reproducible. :func:`table_hash` fingerprints a table (it guards a
checkpoint against resuming another study).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers

import numpy as np
import pandas as pd

from .factors import Range, levels, check_factors, check_name

__all__ = ["full_factorial", "latin_hypercube", "saltelli", "explicit", "table_hash", "make_design", "MAX_RUNS"]

#: the largest design a study builds unless told otherwise (``Study(max_runs=...)``, ``[design] max_runs``): a
#: mistyped level list or ``n`` should give a message, not a MemoryError after minutes
MAX_RUNS = 1_000_000


def _frame(columns, n):
    df = pd.DataFrame({name: pd.Series(list(vals)) if len(vals) else pd.Series([], dtype=float)
                       for name, vals in columns.items()})
    df.index = pd.RangeIndex(n, name="run")
    return df


def full_factorial(factors) -> pd.DataFrame:
    """All combinations of the levels of ``factors`` (dict name -> levels); the last factor varies fastest."""
    f = check_factors(factors)
    names = list(f)
    rows = list(itertools.product(*(f[n] for n in names)))
    return _frame({n: [r[i] for r in rows] for i, n in enumerate(names)}, len(rows))


def _check_n(n, name="n"):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name}: expected a positive int, got {n!r}")
    if n < 1:
        raise ValueError(f"{name}: must be >= 1, got {n!r}")
    return int(n)


def _check_seed(seed):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise TypeError(f"seed: expected a non-negative int or None, got {seed!r}")
    return seed


def _from_unit(f, U):
    """Scale unit samples U (n, k) to the factors' ranges or levels."""
    cols = {}
    for j, (name, spec) in enumerate(f.items()):
        u = np.clip(U[:, j], 0.0, 1.0)
        if isinstance(spec, Range):
            cols[name] = spec.scale(u).tolist()
        else:
            idx = np.minimum((u * len(spec)).astype(int), len(spec) - 1)
            cols[name] = [spec[i] for i in idx]
    return _frame(cols, U.shape[0])


def latin_hypercube(factors, n, seed=None) -> pd.DataFrame:
    """n runs of a Latin hypercube over ``factors`` (:class:`Range` or level lists); ``seed`` for reproducibility."""
    from scipy.stats import qmc
    f = check_factors(factors, allow_ranges=True)
    n = _check_n(n)
    seed = _check_seed(seed)
    try:
        sampler = qmc.LatinHypercube(d=len(f), rng=seed)
    except TypeError:                  # SciPy < 1.15 names it seed
        sampler = qmc.LatinHypercube(d=len(f), seed=seed)
    return _from_unit(f, sampler.random(n))


def problem(factors) -> dict:
    """SALib's problem dict of ``factors`` on the unit cube (the values are scaled afterwards)."""
    f = check_factors(factors, allow_ranges=True)
    return {"num_vars": len(f), "names": list(f), "bounds": [[0.0, 1.0]] * len(f)}


def saltelli(factors, n, seed=None, second_order=True) -> pd.DataFrame:
    """The Saltelli sample of SALib (``SALib.sample.sobol``) for N = ``n`` base samples (a power of 2):
    N (k + 2) runs, or N (2k + 2) with ``second_order``. The table's ``attrs["sobol"]`` holds what
    :func:`cosim.doe.sobol` needs (names, N, second_order)."""
    from SALib.sample import sobol as _sobol_sample
    f = check_factors(factors, allow_ranges=True)
    n = _check_n(n)
    if n & (n - 1):
        raise ValueError(f"n: the Saltelli sample needs a power of 2 base samples, got {n}")
    if not isinstance(second_order, bool):
        raise TypeError(f"second_order: expected True or False, got {second_order!r}")
    pb = problem(f)
    U = _sobol_sample.sample(pb, n, calc_second_order=second_order, scramble=True, seed=_check_seed(seed))
    df = _from_unit(f, np.asarray(U, dtype=float))
    df.attrs["sobol"] = {"names": list(f), "N": n, "second_order": second_order}
    return df


def explicit(table) -> pd.DataFrame:
    """A given parameter table: a DataFrame, a dict name -> column or a list of dicts (one per run)."""
    if isinstance(table, pd.DataFrame):
        df = table.copy()
    elif isinstance(table, dict):
        try:
            df = pd.DataFrame({k: list(v) for k, v in table.items()})
        except (TypeError, ValueError) as exc:
            raise ValueError(f"design: the columns of the table must be sequences of one length ({exc})") from None
    elif isinstance(table, (list, tuple)) and all(isinstance(r, dict) for r in table):
        df = pd.DataFrame(list(table))
    else:
        raise TypeError(f"design: expected 'full', 'lhs', 'sobol' or a table (DataFrame, dict of columns, list of "
                        f"dicts), got {type(table).__name__}")
    if df.shape[1] == 0:
        raise ValueError("design: the table has no columns (factors)")
    if len(df) == 0:
        raise ValueError("design: the table has no rows (runs)")
    for name in df.columns:
        check_name(name, "design")
        if df[name].isna().any():
            raise ValueError(f"design: column {name!r} has missing or NaN values")
        df[name] = levels(name, df[name])
    df = df.reset_index(drop=True)
    df.index = pd.RangeIndex(len(df), name="run")
    return df


def _canon(v):
    if isinstance(v, (bool, np.bool_)):
        return ["b", bool(v)]
    if isinstance(v, (numbers.Integral, np.integer)):
        return ["i", int(v)]
    if isinstance(v, (numbers.Real, np.floating)):
        return ["f", float(v).hex()]
    return ["s", str(v)]


def _canon_json(column: pd.Series) -> list:
    """``json.dumps(_canon(v))`` of every value of ``column``; a column of a NumPy bool, int or float dtype is
    converted as a whole (a design of 10^5 runs: a Python loop per value took seconds)."""
    kind = column.dtype.kind if isinstance(column.dtype, np.dtype) else "O"
    if kind == "b":
        return ['["b", true]' if v else '["b", false]' for v in column.tolist()]
    if kind in "iu":
        return [f'["i", {v}]' for v in column.tolist()]
    if kind == "f":                       # a float's hex() is ASCII: json.dumps would only add the quotes
        return [f'["f", "{v.hex()}"]' for v in column.tolist()]
    return [json.dumps(_canon(v)) for v in column]


def table_hash(table: pd.DataFrame) -> str:
    """SHA-256 of a parameter table (factor names, their order, and every value exactly): the names' JSON, then
    per run the JSON list of its values, each as [type, value] (type "b", "i", "f" or "s"; floats in hex)."""
    h = hashlib.sha256(json.dumps(list(map(str, table.columns))).encode())
    cells = [_canon_json(table.iloc[:, i]) for i in range(table.shape[1])]
    h.update("".join("[" + ", ".join(row) + "]" for row in zip(*cells)).encode())
    return h.hexdigest()


def _check_size(size, what, max_runs):
    if size > max_runs:
        raise ValueError(f"design: {what} has {size} runs, more than max_runs = {max_runs}; pass a larger max_runs "
                         "(Study(max_runs=...), [design] max_runs, cosim doe --max-runs) if you mean it")


def make_design(design, factors=None, n=None, seed=None, second_order=True, max_runs=MAX_RUNS) -> pd.DataFrame:
    """The table of ``design`` ("full", "lhs", "sobol"/"saltelli" or an explicit table); a design of more than
    ``max_runs`` runs is refused before it is built."""
    if isinstance(max_runs, bool) or not isinstance(max_runs, numbers.Integral) or max_runs < 1:
        raise ValueError(f"max_runs: expected an int >= 1, got {max_runs!r}")
    if isinstance(design, str):
        kind = design.lower()
        if kind in ("full", "factorial", "full-factorial"):
            if n is not None:
                raise ValueError("n: not used by the full factorial (its size is the product of the level counts)")
            f = check_factors(factors)
            _check_size(math.prod(len(v) for v in f.values()),
                        "the full factorial (" + " x ".join(f"{len(v)} {k}" for k, v in f.items()) + ")", max_runs)
            return full_factorial(factors)
        if kind in ("lhs", "latin-hypercube"):
            if n is None:
                raise ValueError("n: the Latin hypercube needs the number of runs n")
            _check_size(_check_n(n), "the Latin hypercube", max_runs)
            return latin_hypercube(factors, n, seed)
        if kind in ("sobol", "saltelli"):
            if n is None:
                raise ValueError("n: the Saltelli sample needs the number N of base samples (a power of 2)")
            k = len(check_factors(factors, allow_ranges=True))
            _check_size(_check_n(n) * (2 * k + 2 if second_order is True else k + 2), "the Saltelli sample",
                        max_runs)
            return saltelli(factors, n, seed, second_order)
        raise ValueError(f"design: unknown design {design!r}; use 'full', 'lhs', 'sobol' or a table")
    if factors is not None:
        raise ValueError("factors: give the factors as the columns of the explicit design table, not both")
    return explicit(design)
