"""Side by side with MKLpy 0.6: every method both libraries have, on the same
kernels, their weights (largest difference) and fit times.

MKLpy pulls torch, so it is never a dependency of this project, not even a
test one: it runs in its own virtual environment (``--mklpy-python``, made by
``--install``: ``python -m venv`` and ``pip install torch==2.13.0 MKLpy==0.6``,
the CPU wheel of torch on the project's machines). The bank is written to an
.npz, MKLpy fits it in that interpreter (a subprocess) and writes back its
weights and times; when MKLpy cannot be run the script says so and exits 0.

The bank: make_classification data (20 features, min-max scaled), the
homogeneous polynomial kernels of degrees 1..20, unit diagonal (GRAM's bank
kind, and MKLpy's GRAM assumes a unit diagonal). Pairs (ours = MKLpy's):
uniform = AverageMKL, easymkl (trace_normalise=False, as MKLpy) = EasyMKL,
gram = GRAM, rmkl = RMKL, cka = CKA, fheuristic = FHeuristic, pwmk = PWMK;
align and alignf have no MKLpy counterpart. MKLpy's iterative methods run
with their defaults (1,000 steps at a fixed learning rate), ours to their
default tolerances. Where the weights differ, both weight vectors are scored
on the method's own objective (GRAM: R^2 / rho; R-MKL: Do et al.'s
2 R_mu / rho(K_mu + R_mu / C I), and rho(K_mu + R_mu / C I), what MKLpy's
RMKL ascends; CKA: the centred alignment; PWMK: its cross-validated
accuracies). Times: our fit (with its final SVM; the median of three after
a first fit that compiles the numba solvers), MKLpy's fit (with the SVC
learner of its one-step methods; none for its two-step ones), and ours in
units of the floor F (one uniform combination + one SVC fit, this run).

    python benchmarks/bench_mklpy.py --install            # n = 150, a few minutes
"""

from __future__ import annotations

import argparse

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=150, help="training points")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--C", type=float, default=1.0, help="R-MKL's C (ours and MKLpy's)")
    ap.add_argument("--mklpy-python", default="/tmp/mklpy-env/bin/python")
    ap.add_argument(
        "--install", action="store_true", help="make the MKLpy environment if it is missing"
    )
    args = ap.parse_args()
    # before the imports below: --help answers at once

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _timing import floor as timed_floor
from _timing import median_time
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler

import mkl
from mkl.banks.algebra import combine, kernel_alignment
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import KernelSpec
from mkl.metrics import margin, radius

PAIRS = [  # (ours, our params, MKLpy's class)
    ("uniform", {}, "AverageMKL"),
    ("easymkl", {"lam": 0.1, "trace_normalise": False}, "EasyMKL"),
    ("gram", {}, "GRAM"),
    ("rmkl", {}, "RMKL"),
    ("cka", {}, "CKA"),
    ("fheuristic", {}, "FHeuristic"),
    ("pwmk", {"C": 1000.0, "cv": 3, "delta": 0.0}, "PWMK"),
    ("align", {}, None),
    ("alignf", {}, None),
]

# what runs in MKLpy's interpreter: read the bank, fit each method, write back
MKLPY_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np, torch
from sklearn.svm import SVC
from MKLpy.algorithms import CKA, GRAM, PWMK, RMKL, AverageMKL, EasyMKL, FHeuristic
warnings.simplefilter("ignore")
data = np.load(sys.argv[1])
KL = [torch.from_numpy(k) for k in data["K"]]
Y = torch.from_numpy(data["y"])
C = float(data["C"])
make = {
    "AverageMKL": lambda: AverageMKL(learner=SVC(C=1000)),
    "EasyMKL": lambda: EasyMKL(lam=0.1),
    "GRAM": lambda: GRAM(),
    "RMKL": lambda: RMKL(C=C),
    "CKA": lambda: CKA(learner=SVC(C=1000)),
    "FHeuristic": lambda: FHeuristic(learner=SVC(C=1000)),
    "PWMK": lambda: PWMK(delta=0, cv=3, learner=SVC(C=1000)),
}
out = {}
for name in sys.argv[3:]:
    est = make[name]()
    t = time.perf_counter()
    est.fit(KL, Y)
    seconds = time.perf_counter() - t
    w = est.solution.weights
    out[name] = {"weights": [float(v) for v in w], "seconds": seconds}
json.dump(out, open(sys.argv[2], "w"))
"""


def bank(n: int, seed: int):
    X, y = make_classification(n, 20, n_informative=8, random_state=seed)
    X = MinMaxScaler().fit_transform(X)
    specs = [KernelSpec("homogeneous_polynomial", d, -1, "unit_diagonal") for d in range(1, 21)]
    K, _, _ = compute_bank(specs, X)
    return np.ascontiguousarray(K, dtype=np.float64), np.where(y == 1, 1, -1)


def ensure_mklpy(python: str, install: bool) -> str | None:
    """The interpreter that imports MKLpy, made if asked; None (and why, printed)."""
    check = [python, "-c", "import MKLpy, torch"]
    if Path(python).exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    if not install:
        print(f"MKLpy 0.6 is not importable by {python}: run with --install to make it.")
        return None
    env = Path(python).parents[1]
    steps = [
        [sys.executable, "-m", "venv", str(env)],
        [str(env / "bin" / "pip"), "install", "-q", "torch==2.13.0", "MKLpy==0.6"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"MKLpy 0.6 could not be installed ({' '.join(step)}):")
            print(done.stderr.strip()[-2000:])
            return None
    if subprocess.run(check, capture_output=True).returncode != 0:
        print(f"MKLpy 0.6 was installed into {env} but does not import: nothing compared.")
        return None
    return python


def run_mklpy(python: str, K, y, C: float, names: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        data, out, script = Path(tmp, "bank.npz"), Path(tmp, "out.json"), Path(tmp, "run.py")
        np.savez(data, K=K, y=y.astype(np.float64), C=C)
        script.write_text(MKLPY_SCRIPT)
        subprocess.run([python, str(script), str(data), str(out), *names], check=True)
        return json.loads(out.read_text())


def ratio_gram(K, y, w) -> float:
    """GRAM's objective R^2(K_w) / rho(K_w), rho = (2 margin)^2."""
    K_w = combine(K, w)
    return radius(K_w) / (2 * margin(K_w, y)) ** 2


def soft_margin_rmkl(K, y, w, R, C) -> tuple[float, float]:
    """R-MKL's objective 2 R_w / rho(K_w + R_w / C I), and that rho."""
    R_w = float(w @ R)
    rho = (2 * margin(combine(K, w) + R_w / C * np.eye(len(y)), y)) ** 2
    return 2 * R_w / rho, rho


def objectives(name, K, y, w_ours, w_theirs, R, C) -> str:
    """Both weight vectors on the method's own objective."""
    if name == "gram":
        a, b = ratio_gram(K, y, w_ours), ratio_gram(K, y, w_theirs)
        return f"R^2/rho: ours {a:.6g}, MKLpy {b:.6g}"
    if name == "rmkl":
        (pa, ra), (pb, rb) = (soft_margin_rmkl(K, y, w, R, C) for w in (w_ours, w_theirs))
        return (
            f"2R/rho~: ours {pa:.6g}, MKLpy {pb:.6g}; rho~ (MKLpy's ascent): "
            f"ours {ra:.6g}, MKLpy {rb:.6g}"
        )
    if name == "cka":
        yy = np.outer(y, y).astype(float)
        a = kernel_alignment(combine(K, w_ours), yy)
        b = kernel_alignment(combine(K, w_theirs), yy)
        best = kernel_alignment(combine(K, mkl.make_estimator("alignf").fit(K, y).weights_), yy)
        return f"centred alignment: ours {a:.6g}, MKLpy {b:.6g} (alignf, weights >= 0: {best:.6g})"
    return ""


def main(args) -> None:
    K, y = bank(args.n, args.seed)
    M = K.shape[0]
    fl = timed_floor(K, y, 1.0, 5)
    F = fl["F"]
    print(f"n = {args.n}, {M} unit-diagonal homogeneous polynomial kernels (degrees 1..20)")
    parts = f"pass {fl['pass'] * 1e3:.1f} ms + SVC {fl['svc'] * 1e3:.1f} ms"
    print(f"floor F = {F * 1e3:.1f} ms ({parts})")
    ours = {}
    for name, params, _ in PAIRS:
        if name == "rmkl":
            params = {**params, "C": args.C}
        est = mkl.make_estimator(name, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(K, y)  # a first fit compiles the numba solvers it uses
            seconds = median_time(lambda e=est: e.fit(K, y), 3)
        ours[name] = {"weights": np.asarray(est.weights_), "seconds": seconds, "est": est}
    python = ensure_mklpy(args.mklpy_python, args.install)
    theirs = {}
    if python is not None:
        names = [cls for _, _, cls in PAIRS if cls is not None]
        t = time.perf_counter()
        theirs = run_mklpy(python, K, y, args.C, names)
        print(f"MKLpy ({python}) ran in {time.perf_counter() - t:.1f} s with its start-up")
    R = np.array([radius(k) for k in K])
    print()
    print("| method | MKLpy | max abs weight difference | ours (s) | MKLpy (s) | ours in F | "
          "the method's objective |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name, _, cls in PAIRS:
        mine = ours[name]
        other = theirs.get(cls) if cls else None
        if other is None:
            diff = t_other = "-"
            note = "not in MKLpy" if cls is None else "MKLpy not run"
        else:
            w_theirs = np.asarray(other["weights"])
            diff = f"{np.abs(mine['weights'] - w_theirs).max():.2e}"
            t_other = f"{other['seconds']:.3f}"
            note = objectives(name, K, y, mine["weights"], w_theirs, R, args.C)
        print(
            f"| {name} | {cls or '-'} | {diff} | {mine['seconds']:.3f} | {t_other} | "
            f"{mine['seconds'] / F:.1f} | {note} |"
        )
    for name in ("gram", "rmkl"):
        est = ours[name]["est"]
        print(
            f"\nours {name}: {est.n_iter_} iterations, certified gap {est.gap_:.2e}, "
            f"{est.n_selected_} kernels, converged {est.converged_}"
        )


if __name__ == "__main__":
    main(args)
