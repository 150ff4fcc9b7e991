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
