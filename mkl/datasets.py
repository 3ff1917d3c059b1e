"""The papers' synthetic data: Yang et al. (2011) toys 1-2 and Xu et al. (2010)'s
toy. Registry entries with ``format: generated`` name a generator here; it is
a module of its own so that the kernel and fit stages' source hashes do not
depend on it (a generated dataset's content is tracked through its file)."""

from __future__ import annotations

import numpy as np

from .exceptions import InputError


def gmkl_toy(example: int = 1, n: int = 300, n_features: int = 20, seed: int = 0):
    """Yang et al. 2011, eqs. (28)-(29): x ~ U[0,1]^20, eps ~ N(0,1),
    toy 1: y = sign(sum_{j<=3} f1(x_j) + eps); toy 2 adds f2 on features 4-6,
    f3 on 7-9 and f4 on 10-12."""
    if example not in (1, 2):
        raise InputError(f"GMKL toy example must be 1 or 2, got {example!r}")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, n_features))
    f1 = lambda a: -2 * np.sin(2 * a) + 1 - np.cos(2)  # noqa: E731
    f2 = lambda a: a**2 - 1 / 3  # noqa: E731
    f3 = lambda a: a - 0.5  # noqa: E731
    f4 = lambda a: np.exp(-a) + np.exp(-1) - 1  # noqa: E731
    s = f1(X[:, 0:3]).sum(1)
    if example == 2:
        s += f2(X[:, 3:6]).sum(1) + f3(X[:, 6:9]).sum(1) + f4(X[:, 9:12]).sum(1)
    s += rng.normal(size=n)
    return X, np.where(s >= 0, 1, -1)


def smkl_toy(
    n: int = 500,
    n_features: int = 40,
    n_relevant: int = 34,
    drop_irrelevant: int = 0,
    seed: int = 0,
):
    """Xu et al. 2010, toy data: 500 points in 40 dimensions, label from the
    mean of the first 34 features, the last 6 irrelevant. The paper does not
    name the feature distribution: we draw x ~ N(0, I) (documented choice).

    ``drop_irrelevant`` removes that many of the last (irrelevant) features from
    the same points (Figure 1: "remove one irrelevant feature one by one")."""
    if not 0 <= drop_irrelevant <= n_features - n_relevant:
        raise InputError(
            f"drop_irrelevant must be in [0, {n_features - n_relevant}], got {drop_irrelevant}"
        )
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    y = np.where(X[:, :n_relevant].mean(1) >= 0, 1, -1)
    return X[:, : n_features - drop_irrelevant], y


GENERATORS = {"gmkl_toy": gmkl_toy, "smkl_toy": smkl_toy}
