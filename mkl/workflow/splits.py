"""Seeded train/test splits with inner cross-validation folds (stratified by
class; plain shuffles for a regression's real targets), and
their file ``results/splits/{experiment}/{dataset}.h5`` (one group per
repetition: ``train``, ``test``, ``folds``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import h5py
import numpy as np

from .._io import atomic_path


@dataclass
class Split:
    train: np.ndarray  # indices into the dataset
    test: np.ndarray
    folds: np.ndarray  # inner-CV fold id of each training point (aligned with train)


def make_splits(
    y: np.ndarray,
    repetitions: int,
    train_fraction: float,
    inner_folds: int,
    seed: int,
    balanced: bool = False,
    stratified: bool = True,
    fresh_draws: bool = False,
) -> list[Split]:
    """R seeded stratified train/test splits, each with stratified inner folds.

    ``stratified=False`` (real targets of a regression): shuffled splits and
    shuffled inner folds, with the same seeds.

    ``balanced``: every class is first subsampled (seeded, per split) to the size
    of the smallest one, so train and test hold equal numbers of each class
    (Kundu et al. 2010's protocol); the dropped points are in neither part.

    ``fresh_draws``: the dataset's points are R independent draws of equal size,
    in order (a generated dataset of R times the paper's sample size), and
    split r divides draw r alone into train and test: every repetition sees a
    fresh sample, as Yang et al. 2011 drew their toy data, instead of one
    sample re-split R times."""
    y = np.asarray(y)
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction}")
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    if not stratified and balanced:
        raise ValueError("balanced_classes needs classes; these splits are not stratified")
    if fresh_draws and len(y) % repetitions:
        raise ValueError(
            f"fresh_draws needs the {len(y)} points to be {repetitions} draws of equal size "
            f"(one per repetition): {len(y)} is not a multiple of {repetitions}"
        )
    seeds = np.random.SeedSequence(seed).generate_state(repetitions)
    draw = len(y) // repetitions if fresh_draws else len(y)
    out = []
    for r, s in enumerate(seeds):
        offset = r * draw if fresh_draws else 0
        sp = _split(
            y[offset : offset + draw], train_fraction, inner_folds, int(s), balanced, stratified
        )
        out.append(Split(sp.train + offset, sp.test + offset, sp.folds))
    return out


def _split(
    y: np.ndarray,
    train_fraction: float,
    inner_folds: int,
    seed: int,
    balanced: bool,
    stratified: bool,
) -> Split:
    """One seeded train/test split of the points ``y`` with its inner folds."""
    from sklearn.model_selection import (
        KFold,
        ShuffleSplit,
        StratifiedKFold,
        StratifiedShuffleSplit,
    )

    if not stratified:  # real targets: shuffled, no classes to keep in proportion
        train, test = next(ShuffleSplit(1, train_size=train_fraction, random_state=seed).split(y))
        train = np.sort(train)
        if len(train) < inner_folds:
            raise ValueError(
                f"the training part has {len(train)} points, fewer than inner_folds={inner_folds}"
            )
        folds = np.empty(len(train), dtype=int)
        kf = KFold(inner_folds, shuffle=True, random_state=seed)
        for k, (_, va) in enumerate(kf.split(train)):
            folds[va] = k
        return Split(train, np.sort(test), folds)
    if balanced:  # the same number of each class in train, and in test
        rng = np.random.default_rng(seed)
        classes = np.unique(y)
        k = min(int((y == c).sum()) for c in classes)
        k_train = min(max(round(train_fraction * k), 1), k - 1)
        picks = [rng.permutation(np.flatnonzero(y == c))[:k] for c in classes]
        train = np.sort(np.concatenate([p[:k_train] for p in picks]))
        test = np.sort(np.concatenate([p[k_train:] for p in picks]))
    else:
        sss = StratifiedShuffleSplit(1, train_size=train_fraction, random_state=seed)
        train, test = next(sss.split(np.zeros(len(y)), y))
        train, test = np.sort(train), np.sort(test)
    present = np.bincount(y[train])
    smallest = present[present > 0].min()
    if smallest < inner_folds:
        raise ValueError(
            f"the training part's smallest class has {smallest} points, "
            f"fewer than inner_folds={inner_folds}"
        )
    folds = np.empty(len(train), dtype=int)
    skf = StratifiedKFold(inner_folds, shuffle=True, random_state=seed)
    for k, (_, va) in enumerate(skf.split(np.zeros(len(train)), y[train])):
        folds[va] = k
    return Split(train, test, folds)


def save_splits(path: str | os.PathLike, splits: Sequence[Split], attrs: Mapping) -> None:
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        for r, sp in enumerate(splits):
            g = f.create_group(str(r))
            g.create_dataset("train", data=sp.train)
            g.create_dataset("test", data=sp.test)
            g.create_dataset("folds", data=sp.folds)
        f.attrs["repetitions"] = len(splits)
        for k, v in attrs.items():
            f.attrs[k] = v


def load_split(path: str | os.PathLike, r: int) -> Split:
    with h5py.File(path, "r") as f:
        if str(r) not in f:
            raise ValueError(f"{path} has no split {r} (it has {f.attrs.get('repetitions')})")
        g = f[str(r)]
        return Split(g["train"][()], g["test"][()], g["folds"][()])
