import numpy as np
import pytest


def observed_orders(errors):
    """log2 of successive error ratios over an H-halving sweep."""
    e = np.asarray(errors, dtype=float)
    return np.log2(e[:-1] / e[1:])


def fitted_order(Hs, errors):
    """Least-squares slope of log(error) over log(H)."""
    return float(np.polyfit(np.log(Hs), np.log(errors), 1)[0])


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def recurrence_spectral_radius(X):
    """Spectral radius of the linear recurrence a run realises, read from its states alone.

    A fixed-step co-simulation of an LTI system with n states whose coupling keeps n more (held or lagged values)
    is z_{k+1} = M z_k on 2n values; observed through x_k it obeys x_{k+2} = A1 x_{k+1} + A0 x_k, fitted here by
    least squares. The block companion matrix of (A1, A0) has M's eigenvalues. Returns (rho, max residual of the fit),
    so a test can check that the run really is such a recurrence.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    past = np.hstack([X[1:-1], X[:-2]])
    coef = np.linalg.lstsq(past, X[2:], rcond=None)[0]
    companion = np.block([[coef[:n].T, coef[n:].T], [np.eye(n), np.zeros((n, n))]])
    return float(np.max(np.abs(np.linalg.eigvals(companion)))), float(np.max(np.abs(past @ coef - X[2:])))
