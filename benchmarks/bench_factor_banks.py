"""MKL on factor banks at scales the dense bank cannot reach (issue 14).

Every figure printed comes from this one run; each fit runs in a fresh process
(its peak memory is that process's maximum resident set, data and factors
included). Workloads:

* main: GMKL toy-1 features (20, standardised), n training points and 20,000
  test points, M Gaussian kernels with widths geometrically spaced in [1, 30],
  each approximated by Nystroem with the same ``--rank`` landmarks, float32,
  C = 1, relative gap ``--tol`` (0.01). The factored floor F is one cold
  factored SVM solve on the uniform weights plus one pass Z'v, timed in the
  same process as the fit.
* ``--sweep-n``: the same for several n (level and uniform).
* ``--out-of-core DIR``: the main workload's factors written to an HDF5 file in
  DIR (block by block, in a process of its own; kept for later runs) and
  fitted from the file, read by row blocks (``FactorBank.from_matrix`` of the
  h5py dataset): the points drawn in blocks of toy-1 and standardised by the
  distribution's own mean and deviation (U[0, 1]), the landmarks drawn from
  the first block. ``build_s`` is then the bank's first pass over the file
  (its checks); no floor is timed (a cold solve from disk costs what the
  uniform fit costs: compare with that row).
* ``--sweep-rank-one``: a sparse "document-term" matrix (Zipf-distributed term
  frequencies, 20,000 documents, labels from a sparse linear rule with 10%
  flipped), one rank-one kernel per term, for several vocabulary sizes
  (lp_analytic with p = 2, level, uniform).

    python benchmarks/bench_factor_banks.py                        # n = 100,000
    python benchmarks/bench_factor_banks.py --n 30000 --algorithms uniform level
    python benchmarks/bench_factor_banks.py --sweep-n 10000 30000 100000
    python benchmarks/bench_factor_banks.py --sweep-rank-one 1000 10000 100000
    python benchmarks/bench_factor_banks.py --rank 50 --out-of-core /data/mkl \\
        --sweep-n 10000 100000 1000000 4000000 10000000
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time
import warnings
from queue import Empty

import numpy as np


def main_workload(n: int, n_test: int, M: int, rank: int, seed: int = 0):
    from mkl.banks.factor_builders import nystroem_bank
    from mkl.datasets import gmkl_toy
    from mkl.kernels.specs import KernelSpec

    X, y = gmkl_toy(1, n=n + n_test, seed=seed)
    X = (X - X.mean(0)) / X.std(0)
    specs = [KernelSpec("gaussian", float(w)) for w in np.geomspace(1.0, 30.0, M)]
    t0 = time.perf_counter()
    bank = nystroem_bank(
        specs, X[:n], X[n:], rank=rank, dtype=np.float32, y_train=y[:n], y_test=y[n:]
    )
    return bank, time.perf_counter() - t0


def factor_file(directory: str, n: int, n_test: int, M: int, rank: int, seed: int = 0) -> str:
    """The main workload's factors in an HDF5 file (datasets Z, T, y, y_test),
    written block by block and renamed when complete; an existing file is kept."""
    import os

    import h5py

    from mkl.banks.factor_builders import nystroem_maps
    from mkl.datasets import gmkl_toy
    from mkl.kernels.specs import KernelSpec

    path = os.path.join(directory, f"toy1_n{n}_test{n_test}_M{M}_rank{rank}_seed{seed}.h5")
    if os.path.exists(path):
        return path
    os.makedirs(directory, exist_ok=True)
    block = 1 << 17

    def draw(rows: int, k: int):
        X, y = gmkl_toy(1, n=rows, seed=seed * 1_000_003 + k)
        return (X - 0.5) * np.sqrt(12.0), y  # U[0, 1] standardised

    specs = [KernelSpec("gaussian", float(w)) for w in np.geomspace(1.0, 30.0, M)]
    first, _ = draw(min(n, block), 1)
    maps, _ = nystroem_maps(specs, first, rank=rank, dtype=np.float32)
    R = int(maps.ranks().sum())
    with h5py.File(path + ".part", "w") as f:
        Z = f.create_dataset("Z", shape=(n, R), dtype=np.float32)
        y = f.create_dataset("y", shape=(n,), dtype=np.int8)
        for k, a in enumerate(range(0, n, block)):
            b = min(a + block, n)
            X, labels = draw(b - a, k + 1)
            Z[a:b] = np.hstack(maps.transform(X))
            y[a:b] = labels
        X_test, y_test = draw(n_test, 0)
        f["T"] = np.hstack(maps.transform(X_test))
        f["y_test"] = y_test.astype(np.int8)
        f["ranks"] = maps.ranks()
    os.replace(path + ".part", path)
    return path


def disk_workload(path: str, in_memory: bool = False):
    """The bank of :func:`factor_file`'s file, its training factors read by row
    blocks (or ``in_memory``: read whole first); the time to build it (with
    the factors on disk: its first pass, the checks)."""
    import h5py

    from mkl.banks.factor_bank import FactorBank

    f = h5py.File(path, "r")
    t0 = time.perf_counter()
    Z = f["Z"][()] if in_memory else f["Z"]
    bank = FactorBank.from_matrix(
        Z, f["ranks"][()], test=f["T"][()], y_train=f["y"][()], y_test=f["y_test"][()]
    )
    return bank, time.perf_counter() - t0


def text_workload(n_terms: int, n_docs: int = 20000, n_test: int = 5000, seed: int = 0):
    import scipy.sparse as sp

    from mkl.banks.factor_builders import rank_one_bank

    rng = np.random.default_rng(seed)
    total = n_docs + n_test
    freq = 1.0 / np.arange(1, n_terms + 1) ** 1.1  # Zipf
    freq *= 60.0 / freq.sum()  # about 60 distinct terms per document
    nnz_per_col = rng.binomial(total, np.minimum(freq, 1.0))
    rows = np.concatenate([rng.choice(total, k, replace=False) for k in nnz_per_col])
    cols = np.repeat(np.arange(n_terms), nnz_per_col)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(total, n_terms))
    X.data = np.log1p(X.data)
    w = np.zeros(n_terms)
    relevant = rng.choice(min(n_terms, 2000), 50, replace=False)
    w[relevant] = rng.normal(size=50)
    score = X @ w
    y = np.where(score > np.median(score), 1, -1)
    flip = rng.random(total) < 0.1
    y[flip] = -y[flip]
    t0 = time.perf_counter()
    bank = rank_one_bank(
        X[:n_docs], X[n_docs:], normalise="none", y_train=y[:n_docs], y_test=y[n_docs:]
    )
    return bank, time.perf_counter() - t0


def _fit_case(args: dict, queue) -> None:
    """One fit in this (fresh) process; puts a result row on ``queue``."""
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    import mkl
    from mkl.solvers.coordinate_descent import solve_factored_svm

    with threadpool_limits(limits=args.get("threads", 2)):
        if args["workload"] == "main":
            bank, t_build = main_workload(args["n"], args["n_test"], args["M"], args["rank"])
        elif args["workload"] == "disk":
            bank, t_build = disk_workload(args["path"], args.get("in_memory", False))
        else:
            bank, t_build = text_workload(args["n_terms"])
        y = bank.y_train
        y_pm = np.where(y == np.unique(y)[1], 1.0, -1.0)
        M = bank.n_kernels
        # load the compiled solver (numba's cache) before anything is timed
        solve_factored_svm(np.ones((2, 1)), np.array([0, 1]), np.ones(1), np.array([1.0, -1.0]))
        # the factored floor: one cold SVM solve on the uniform weights + one pass,
        # on the estimators' problem (b^2 = the mean diagonal of the average kernel)
        b2 = float(bank.traces().sum()) / (M * bank.n_train)
        t_svm = t_pass = float("nan")
        if args["workload"] != "disk" or args.get("in_memory"):
            t0 = time.perf_counter()
            sol = solve_factored_svm(
                bank.train, bank.offsets, np.full(M, 1.0 / M), y_pm, args["C"], 1e-3,
                intercept_sq=b2,
            )  # fmt: skip
            t_svm = time.perf_counter() - t0
            t0 = time.perf_counter()
            bank.quadratic_forms(sol.dual_coef)
            t_pass = time.perf_counter() - t0
        name, params = args["algorithm"], dict(args.get("params", {}))
        if name != "uniform":
            params["tol"] = args["tol"]
        est = mkl.make_estimator(name, C=args["C"], **params)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(bank, y)
        t_fit = time.perf_counter() - t0
        acc = float((est.predict(bank) == bank.y_test).mean())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # GiB (ru_maxrss in KiB)
    storage = "disk" if args["workload"] == "disk" and not args.get("in_memory") else "memory"
    queue.put(
        {
            "algorithm": name + "".join(f" {k}={v}" for k, v in args.get("params", {}).items()),
            "storage": storage,
            "n": bank.n_train,
            "M": M,
            "R": int(bank.offsets[-1]),
            "build_s": t_build,
            "F_s": t_svm + t_pass,
            "fit_s": t_fit,
            "fit_F": t_fit / (t_svm + t_pass),
            "gap": float(est.gap_),
            "converged": bool(est.converged_),
            "iterations": int(est.n_iter_),
            "selected": int(est.n_selected_),
            "test_acc": acc,
            "peak_GiB": peak,
        }
    )


def run_case(args: dict) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_fit_case, args=(args, queue))
    proc.start()
    proc.join()  # the row is small: the child never blocks on the queue
    if proc.exitcode != 0:
        raise RuntimeError(f"the fit process for {args} exited with code {proc.exitcode}")
    return queue.get(timeout=10)


COLUMNS = [
    ("algorithm", "{:<18}"),
    ("storage", "{:<6}"),
    ("n", "{:>7}"),
    ("M", "{:>7}"),
    ("R", "{:>7}"),
    ("build_s", "{:>8.1f}"),
    ("F_s", "{:>7.2f}"),
    ("fit_s", "{:>8.1f}"),
    ("fit_F", "{:>7.1f}"),
    ("iterations", "{:>5}"),
    ("gap", "{:>9.2e}"),
    ("converged", "{!s:>6}"),
    ("selected", "{:>6}"),
    ("test_acc", "{:>7.4f}"),
    ("peak_GiB", "{:>7.2f}"),
]


def print_header() -> None:
    print("| " + " | ".join(c for c, _ in COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS), flush=True)


def print_rows(rows: list[dict]) -> None:
    for r in rows:
        print("| " + " | ".join(f.format(r[c]) for c, f in COLUMNS) + " |", flush=True)


def parse_algorithm(text: str) -> tuple[str, dict]:
    name, _, rest = text.partition(":")
    params = {}
    for kv in filter(None, rest.split(",")):
        k, v = kv.split("=")
        # level:inexact=true
        params[k] = v.lower() == "true" if v.lower() in ("true", "false") else float(v)
    return name, params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--n-test", type=int, default=20_000)
    ap.add_argument("--kernels", type=int, default=20)
    ap.add_argument("--rank", type=int, default=200)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument(
        "--algorithms",
        nargs="+",
        default=["uniform", "level", "lp_analytic:p=2", "simplemkl"],
    )
    ap.add_argument("--sweep-n", type=int, nargs="+")
    ap.add_argument(
        "--out-of-core",
        metavar="DIR",
        help="write the main workload's factors to an HDF5 file in DIR and fit from it",
    )
    ap.add_argument(
        "--also-in-memory",
        type=int,
        default=0,
        metavar="N",
        help="with --out-of-core: also fit the same file's factors read into memory, up to n = N",
    )
    ap.add_argument("--sweep-rank-one", type=int, nargs="+")
    ap.add_argument(
        "--rank-one-algorithms",
        nargs="+",
        default=["uniform", "lp_analytic:p=2", "level"],
        help="the methods of --sweep-rank-one",
    )
    a = ap.parse_args()
    common = {"C": a.C, "tol": a.tol, "M": a.kernels, "rank": a.rank, "n_test": a.n_test}
    rows = []
    if a.sweep_rank_one:
        print(f"one rank-one kernel per term, 20,000 documents, C = 1, tol = {a.tol:g}")
        print_header()
        for n_terms in a.sweep_rank_one:
            for algo in a.rank_one_algorithms:
                name, params = parse_algorithm(algo)
                rows.append(
                    run_case(
                        {
                            **common,
                            "workload": "text",
                            "n_terms": n_terms,
                            "algorithm": name,
                            "params": params,
                        }
                    )
                )
                print_rows(rows[-1:])  # as each fit ends: the large cases take long
        return
    sizes = a.sweep_n or [a.n]
    algorithms = ["uniform", "level"] if a.sweep_n else a.algorithms
    where = f"factors on disk in {a.out_of_core}" if a.out_of_core else "factors in memory"
    print(
        f"{a.kernels} Gaussian kernels, Nystroem rank {a.rank}, float32, C = {a.C}, "
        f"tol = {a.tol}; 2 threads; {where}"
    )
    print_header()
    for n in sizes:
        case = {**common, "workload": "main", "n": n}
        if a.out_of_core:
            path = _in_process(factor_file, a.out_of_core, n, a.n_test, a.kernels, a.rank)
            case = {**common, "workload": "disk", "path": path}
        storages = [False, True] if a.out_of_core and n <= a.also_in_memory else [False]
        for in_memory in storages:
            for algo in algorithms:
                name, params = parse_algorithm(algo)
                run = {**case, "algorithm": name, "params": params, "in_memory": in_memory}
                rows.append(run_case(run))
                print_rows(rows[-1:])


def _call(queue, function, args) -> None:
    queue.put(function(*args))


def _in_process(function, *args):
    """function(*args) in a fresh process (its memory is not the fits')."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_call, args=(queue, function, args))
    proc.start()
    while True:  # the result, or the process's death (killed for memory, say)
        try:
            result = queue.get(timeout=5)
            break
        except Empty:
            if not proc.is_alive():
                raise RuntimeError(
                    f"{function.__name__}{args} exited with code {proc.exitcode}"
                ) from None
    proc.join()
    return result


if __name__ == "__main__":
    main()
