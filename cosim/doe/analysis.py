"""Analysis of a study's table (genser2020 §12.1).

* :func:`anova`: main effects and two-factor interactions: SS, DoF, MS, F, p, eta squared (SS share of the total)
  and genser2020 Tables 3.10/3.11's normalised % (MS_X / Σ MS of all main and two-factor effects · 100). By default
  through ``statsmodels``' ``anova_lm`` (Type II, or Type III with sum-to-zero coding); ``method="direct"`` is
  genser2020 eq. 3.11–3.12 for balanced tables (every combination of the factors' levels equally often, e.g. a full
  factorial with n = 1 replicate), ``"lstsq"`` Type II from least-squares fits, ``"auto"`` the one of the two that
  fits. F and p use the residual (the higher-order interactions in a full factorial).
* :func:`sobol`: first- and total-order Sobol' indices of a Saltelli study (SALib).
* :func:`optimum`: the ascending-sorting analysis: runs sorted by the response, "nearly optimal" runs with a
  response ≤ ``tol`` · min (1.1), or the ``top`` best, or at least ``min_runs``; the optimum of a numeric factor is
  the (histogram-weighted) mean over those runs, of a boolean or text factor its most frequent value.
* :func:`histogram_optimum`: the same mean from printed histogram counts.
"""
from __future__ import annotations

import itertools
import math
import numbers
import warnings

import numpy as np
import pandas as pd

__all__ = ["anova", "normalised_percent", "sobol", "optimum", "histogram_optimum"]

_COLUMNS = ["SS", "DoF", "MS", "F", "p", "eta_sq", "percent"]
_METHODS = ("statsmodels", "auto", "direct", "lstsq")


def check_table(df, factors, response):
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df: expected a pandas DataFrame (a study's table), got {type(df).__name__}")
    if factors is None:
        factors = (df.attrs.get("doe") or {}).get("factors")
        if factors is None:
            raise ValueError("factors: give the factor names (the table carries none)")
    if isinstance(factors, str):
        factors = [factors]
    factors = list(factors)
    if not factors:
        raise ValueError("factors: no factor given")
    missing = [f for f in factors if f not in df.columns]
    if missing:
        raise ValueError(f"factors: {missing} are not columns of the table; columns: {list(df.columns)}")
    if len(set(factors)) != len(factors):
        raise ValueError(f"factors: names repeat in {factors}")
    if not isinstance(response, str) or response not in df.columns:
        raise ValueError(f"response: {response!r} is not a column of the table; columns: {list(df.columns)}")
    if response in factors:
        raise ValueError(f"response: {response!r} is also one of the factors")
    try:
        y = df[response].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"response: column {response!r} is not numeric") from None
    return factors, y


def normalised_percent(ms) -> pd.Series:
    """genser2020 Tables 3.10/3.11's "normalised %": 100 · MS_X / Σ MS over the effects given (a "Residual"
    entry is left out of the sum and of the result)."""
    s = pd.Series(ms, dtype=float) if not isinstance(ms, pd.Series) else ms.astype(float)
    if len(s) == 0:
        raise ValueError("ms: no effects given")
    s = s.drop("Residual", errors="ignore")
    if not np.all(np.isfinite(s.to_numpy())) or (s < 0).any():
        raise ValueError("ms: mean squares must be finite and non-negative")
    total = float(s.sum())
    return s * (100.0 / total) if total > 0 else s * 0.0


def _terms(factors, interactions):
    if isinstance(interactions, bool) or interactions not in (1, 2):
        raise ValueError(f"interactions: 1 (main effects) or 2 (main and two-factor effects), got {interactions!r}")
    terms = [(f,) for f in factors]
    if interactions == 2:
        terms += list(itertools.combinations(factors, 2))
    return terms


def _balanced(codes, nlev):
    counts = np.bincount(np.ravel_multi_index(codes, nlev), minlength=int(np.prod(nlev)))
    return counts.min() > 0 and counts.min() == counts.max()


def _direct(y, codes, nlev, terms):
    """genser2020 eq. 3.11–3.12 (balanced data): SS_A = (a/N) Σ_i y_{A=i}² − y²/N, SS_AB = (ab/N) Σ_ij y_{ij}² −
    y²/N − SS_A − SS_B, on the centred response (the same values, better conditioned)."""
    N = y.size
    yc = y - y.mean()
    ss, dof = {}, {}
    for t in terms:
        idx = list(t)
        cells = int(np.prod([nlev[i] for i in idx]))
        flat = np.ravel_multi_index([codes[i] for i in idx], [nlev[i] for i in idx])
        sums = np.bincount(flat, weights=yc, minlength=cells)
        v = cells / N * float(np.sum(sums ** 2))
        if len(t) == 2:
            v -= ss[(t[0],)] + ss[(t[1],)]
        ss[t] = max(v, 0.0)
        dof[t] = int(np.prod([nlev[i] - 1 for i in idx]))
    sst = float(np.sum(yc ** 2))
    return ss, dof, max(sst - sum(ss.values()), 0.0), N - 1 - sum(dof.values())


def _dummies(code, n):
    D = np.zeros((code.size, n - 1))
    rows = np.nonzero(code > 0)[0]
    D[rows, code[rows] - 1] = 1.0
    return D


def _lstsq_type2(y, codes, nlev, terms):
    """Type II sums of squares from least-squares fits of treatment-coded models."""
    N = y.size
    mains = [_dummies(codes[i], nlev[i]) for i in range(len(nlev))]
    cols = {}
    for t in terms:
        if len(t) == 1:
            cols[t] = mains[t[0]]
        else:
            A, B = mains[t[0]], mains[t[1]]
            cols[t] = (A[:, :, None] * B[:, None, :]).reshape(N, -1)

    def fit(ts):
        X = np.hstack([np.ones((N, 1))] + [cols[t] for t in ts])
        beta, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
        r = y - X @ beta
        return float(r @ r), int(rank)

    ss, dof = {}, {}
    for t in terms:
        others = [u for u in terms if u != t and not set(t) < set(u)]
        rss1, r1 = fit(others)
        rss0, r0 = fit(others + [t])
        ss[t], dof[t] = max(rss1 - rss0, 0.0), r0 - r1
    rss, rank = fit(terms)
    return ss, dof, rss, N - rank


def _statsmodels(df, factors, response, terms, typ=2):
    """``anova_lm`` of an OLS fit with every factor categorical (Type III with sum-to-zero coding, where it is
    meaningful)."""
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm
    alias = {f: f"f{i}" for i, f in enumerate(factors)}
    data = pd.DataFrame({alias[f]: df[f].astype(str).to_numpy() for f in factors})
    data["y"] = df[response].to_numpy(dtype=float)
    coding = ", Sum" if typ == 3 else ""
    name = {f: f"C({alias[f]}{coding})" for f in factors}
    rhs = " + ".join(":".join(name[f] for f in t) for t in terms)
    with warnings.catch_warnings():        # no residual DoF (a saturated model): F and p are NaN, said below
        warnings.simplefilter("ignore", RuntimeWarning)
        tab = anova_lm(smf.ols(f"y ~ {rhs}", data=data).fit(), typ=typ)
    back = {":".join(name[f] for f in t): t for t in terms}
    ss = {back[k]: float(tab.loc[k, "sum_sq"]) for k in back}
    dof = {back[k]: int(round(tab.loc[k, "df"])) for k in back}
    return ss, dof, float(tab.loc["Residual", "sum_sq"]), int(round(tab.loc["Residual", "df"]))


def _model_dof(nlev, terms_by_name):
    """Degrees of freedom of the effects of a full-rank model of these terms (levels per factor)."""
    return sum(math.prod(nlev[i] - 1 for i in t) for t in terms_by_name)


def _old_anova_order(response, factors):
    """(response, factors) of a call in anova's former order ``anova(df, factors, response)``, recognised by a
    list of factor names in the response's place (a DeprecationWarning); other calls unchanged."""
    if isinstance(response, str) or not isinstance(response, (list, tuple, pd.Index)):
        return response, factors
    warnings.warn("anova(df, factors, response) is deprecated; the order is anova(df, response, factors=...) as in "
                  "sobol and optimum", DeprecationWarning, stacklevel=3)
    return ("eps_mono" if factors is None else factors), response


def anova(df, response="eps_mono", factors=None, interactions=2, method="statsmodels", typ=2) -> pd.DataFrame:
    """Analysis of variance of ``response`` over ``factors``: main effects and, with ``interactions=2``, all
    two-factor interactions (genser2020 eq. 3.11–3.12).

    Parameters
    ----------
    df : pandas.DataFrame
        A study's table.
    response : str
        The response column.
    factors : list of str, optional
        Default: the factors the table carries. The former order ``anova(df, factors, response)`` is recognised
        where ``factors`` is a list (DeprecationWarning); a single factor name given positionally in that order is
        not (it reads as the response), and ``anova(df, [...], response=...)`` is a TypeError.
    interactions : {1, 2}
        2 adds every two-factor interaction.
    method : {"statsmodels", "auto", "direct", "lstsq"}
        "statsmodels" (default): ``statsmodels.stats.anova.anova_lm`` of type ``typ``; "direct": genser2020 eq.
        3.11–3.12, balanced tables only; "lstsq": Type II sums of squares from least-squares fits; "auto": "direct"
        for balanced tables, "lstsq" otherwise. On a balanced table all agree (to rounding).
    typ : {2, 3}
        The sums of squares' type with ``method="statsmodels"`` (3: sum-to-zero coding of the factors).

    Returns
    -------
    pandas.DataFrame
        Indexed by effect ("A", "A:B", …, "Residual") with columns SS, DoF, MS = SS/DoF, F = MS / MS_Residual, p
        (F distribution), eta_sq = SS / SS_total (the effect's share of the response's variation, η²) and percent
        = genser2020 Table 3.10's normalised % (100 · MS / Σ MS over the effects, Residual left out), which ranks
        effects by mean square, not by variance explained.

    Notes
    -----
    Non-finite responses (failed runs) are refused: saturate them first (e.g. ``eps_mono_sat``) or filter the
    table.
    """
    from scipy import stats
    response, factors = _old_anova_order(response, factors)
    factors, y = check_table(df, factors, response)
    if method not in _METHODS:
        raise ValueError(f"method: one of {_METHODS}, got {method!r}")
    if isinstance(typ, bool) or typ not in (2, 3):
        raise ValueError(f"typ: 2 or 3 (the type of sums of squares), got {typ!r}")
    if typ == 3 and method != "statsmodels":
        raise ValueError(f"typ: Type III sums of squares need method='statsmodels', got method={method!r}")
    terms = _terms(factors, interactions)
    bad = ~np.isfinite(y)
    if bad.any():
        raise ValueError(f"response: {int(bad.sum())} runs have non-finite {response!r} (failed runs?); saturate "
                         "the response (e.g. eps_mono_sat) or filter the table first")
    if y.size < 2:
        raise ValueError(f"df: need at least 2 runs, got {y.size}")
    codes, nlev = [], []
    for f in factors:
        c, uniq = pd.factorize(df[f], sort=True)
        if len(uniq) < 2:
            raise ValueError(f"factors: {f!r} has a single level in the table; it has no effect to analyse")
        codes.append(c.astype(np.int64))
        nlev.append(len(uniq))
    balanced = _balanced(codes, nlev)
    if method == "direct" and not balanced:
        raise ValueError("method: 'direct' needs a balanced table (every level combination equally often)")
    used = method if method != "auto" else ("direct" if balanced else "lstsq")
    pos = {f: i for i, f in enumerate(factors)}
    if method == "statsmodels" and y.size - 1 - _model_dof(nlev, [[pos[f] for f in t] for t in terms]) <= 0:
        # a saturated model (no residual, e.g. two factors with their interaction, n = 1): anova_lm cannot
        # compute its covariance; Type II sums of squares are the same from the least-squares fits
        if typ == 3:
            raise ValueError("typ: Type III needs residual degrees of freedom; this model has none (use typ=2 or "
                             "interactions=1)")
        used = "lstsq"
    if used == "statsmodels":
        ss, dof, ssr, dofr = _statsmodels(df, factors, response, terms, typ)
    else:
        iterms = [tuple(pos[f] for f in t) for t in terms]
        fn = _direct if used == "direct" else _lstsq_type2
        ss_i, dof_i, ssr, dofr = fn(y, codes, nlev, iterms)
        ss = {t: ss_i[it] for t, it in zip(terms, iterms)}
        dof = {t: dof_i[it] for t, it in zip(terms, iterms)}
    names = [":".join(t) for t in terms]
    SS = np.array([ss[t] for t in terms])
    DoF = np.array([dof[t] for t in terms], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        MS = np.where(DoF > 0, SS / DoF, np.nan)
        msr = ssr / dofr if dofr > 0 else math.nan
        F = MS / msr if dofr > 0 and msr > 0 else np.full(len(terms), math.nan)
    p = np.where(np.isfinite(F), stats.f.sf(F, DoF, max(dofr, 1)), np.nan)
    pct = normalised_percent(pd.Series(np.nan_to_num(MS), index=names))
    sst = float(np.sum((y - y.mean()) ** 2))
    eta = SS / sst if sst > 0 else np.zeros_like(SS)
    out = pd.DataFrame({"SS": SS, "DoF": DoF.astype(int), "MS": MS, "F": F, "p": p, "eta_sq": eta,
                        "percent": pct.to_numpy()}, index=pd.Index(names, name="effect"))
    out.loc["Residual"] = [ssr, dofr, msr, np.nan, np.nan, ssr / sst if sst > 0 else 0.0, np.nan]
    out["DoF"] = out["DoF"].astype(int)
    out.attrs["balanced"] = bool(balanced)
    out.attrs["response"] = response
    out.attrs["units"] = dict((df.attrs.get("doe") or {}).get("units") or {})   # for the plots' labels
    out.attrs["method"] = used
    out.attrs["columns"] = {"eta_sq": "SS / SS_total", "percent": "genser2020 Table 3.10: 100 MS / sum of MS"}
    return out


def sobol(df, response="eps_mono", factors=None, second_order=None, conf_level=0.95, seed=None) -> pd.DataFrame:
    """First-order (S1) and total-order (ST) Sobol' indices of ``response`` from a study with ``design="sobol"``
    (SALib's ``sobol.analyze``; the rows must be the complete Saltelli sample in run order).

    Parameters
    ----------
    df : pandas.DataFrame
        A study's table.
    response : str
        The response column.
    factors : list of str, optional
        Default: the factors of the Saltelli sample the table carries.
    second_order : bool, optional
        Default: as the study's design.
    conf_level : float
        Confidence level of the ``*_conf`` columns.
    seed : int, optional
        Seed of SALib's bootstrap.

    Returns
    -------
    pandas.DataFrame
        Indexed by factor with S1, S1_conf, ST, ST_conf; ``attrs["S2"]`` holds the second-order indices when
        computed.
    """
    from SALib.analyze import sobol as _sobol
    info = df.attrs.get("sobol", {}) if isinstance(df, pd.DataFrame) else {}
    if factors is None:
        factors = info.get("names")
    factors, y = check_table(df, factors, response)
    if second_order is None:
        second_order = info.get("second_order", True)
    if not isinstance(second_order, bool):
        raise TypeError(f"second_order: expected True or False, got {second_order!r}")
    k = len(factors)
    per = 2 * k + 2 if second_order else k + 2
    if y.size % per:
        raise ValueError(f"df: {y.size} runs is not a Saltelli sample of {k} factors (a multiple of {per} with "
                         f"second_order={second_order}); use a study with design='sobol'")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"response: non-finite values of {response!r} (failed runs?); saturate or replace them")
    if "run" in df.columns or df.index.name == "run":
        y = df.sort_index()[response].to_numpy(dtype=float)
    problem = {"num_vars": k, "names": factors, "bounds": [[0.0, 1.0]] * k}
    si = _sobol.analyze(problem, y, calc_second_order=second_order, conf_level=conf_level,
                        print_to_console=False, seed=seed)
    out = pd.DataFrame({c: np.asarray(si[c], dtype=float) for c in ("S1", "S1_conf", "ST", "ST_conf")},
                       index=pd.Index(factors, name="factor"))
    if second_order:
        out.attrs["S2"] = pd.DataFrame(np.asarray(si["S2"], dtype=float), index=factors, columns=factors)
    return out


def _nearly_optimal(df, response, tol, top, min_runs):
    y = pd.to_numeric(df[response], errors="coerce").astype(float)
    order = y.sort_values(kind="mergesort", na_position="last").index
    finite = y[np.isfinite(y)]
    if finite.empty:
        raise ValueError(f"response: no finite value of {response!r} in the table")
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, numbers.Integral) or top < 1:
            raise ValueError(f"top: expected an int >= 1, got {top!r}")
        n = min(int(top), len(finite))
    else:
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol >= 1:
            raise ValueError(f"tol: expected a factor >= 1 (genser2020: 1.1), got {tol!r}")
        ymin = float(finite.min())
        limit = ymin * tol if ymin >= 0 else ymin * (2 - tol)
        n = int((finite <= limit).sum())
        if min_runs is not None:
            if isinstance(min_runs, bool) or not isinstance(min_runs, numbers.Integral) or min_runs < 1:
                raise ValueError(f"min_runs: expected an int >= 1, got {min_runs!r}")
            n = max(n, min(int(min_runs), len(finite)))
    return order[:n]


def optimum(df, response="eps_mono", factors=None, tol=1.1, top=None, min_runs=None) -> pd.Series:
    """genser2020 §12.1's ascending-sorting optimum: sort the runs by ``response`` and average the factors over
    the nearly optimal ones.

    Parameters
    ----------
    df : pandas.DataFrame
        A study's table.
    response : str
        The response column.
    factors : list of str, optional
        Default: the factors the table carries.
    tol : float
        The nearly optimal runs have a response ≤ ``tol`` · min (genser2020: 1.1) ...
    top : int, optional
        ... or are the ``top`` best ...
    min_runs : int, optional
        ... or at least the ``min_runs`` best (the thesis used 50 for MOESP).

    Returns
    -------
    pandas.Series
        Per factor: the mean over the nearly optimal runs for numbers (= the histogram-weighted mean), the most
        frequent value for booleans and text (ties: the value of the better run). ``attrs``: ``runs`` (the nearly
        optimal run numbers, best first), ``counts`` ({factor: {level: count}}, the histograms) and ``n``.
    """
    factors, _ = check_table(df, factors, response)
    runs = _nearly_optimal(df, response, tol, top, min_runs)
    best = df.loc[runs]
    values, counts = {}, {}
    for f in factors:
        col = best[f]
        counts[f] = {k: int(v) for k, v in col.value_counts(sort=False).items()}
        numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        if numeric:
            values[f] = float(col.astype(float).mean())
        else:
            vc = col.value_counts(sort=False)
            top_count = vc.max()
            winners = set(vc[vc == top_count].index)
            values[f] = next(v for v in col if v in winners)
    out = pd.Series(values, dtype=object, name=f"optimum of {response}")
    out.attrs["runs"] = list(runs)
    out.attrs["counts"] = counts
    out.attrs["n"] = len(runs)
    return out


def histogram_optimum(counts, n=None) -> float:
    """Σ count · value / n from histogram counts ({value: count} or (value, count) pairs), n = Σ count by default
    (genser2020 §12.3 divides by the number of nearly optimal runs)."""
    items = list(counts.items()) if isinstance(counts, dict) else list(counts)
    if not items:
        raise ValueError("counts: empty")
    total, num = 0, 0.0
    for pair in items:
        try:
            v, c = pair
        except (TypeError, ValueError):
            raise TypeError(f"counts: expected {{value: count}} or (value, count) pairs, got {pair!r}") from None
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 0:
            raise ValueError(f"counts: count of {v!r} must be a non-negative int, got {c!r}")
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"counts: value {v!r} must be a finite number")
        total += int(c)
        num += float(v) * int(c)
    if n is None:
        n = total
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n: expected a positive int, got {n!r}")
    return num / n
