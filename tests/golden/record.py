"""Record tests/golden/golden.npz from tests/golden/cases.py (run from the repository root):

    .venv/bin/python -m tests.golden.record
"""
import pathlib

import numpy as np

from .cases import CASES, compute

PATH = pathlib.Path(__file__).with_name("golden.npz")


def main():
    data = {}
    for name in CASES:
        for key, v in compute(name).items():
            data[f"{name}/{key}"] = v
    np.savez_compressed(PATH, **data)
    print(f"{PATH}: {len(CASES)} cases, {len(data)} arrays")


if __name__ == "__main__":
    main()
