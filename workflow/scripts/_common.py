"""Shared start-up of the workflow scripts: logging to the rule's log file, a
check that `import mkl` found this project's library, one BLAS thread, and one
clear error line for expected failures (bad input, unavailable data)."""

import logging
import sys
import traceback


def run(snakemake, main):
    logging.basicConfig(
        filename=snakemake.log[0],
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        force=True,
    )
    log = logging.getLogger(snakemake.rule)
    # "start" and the closing "done" time the job's own work (benchmarks/workflow_overhead.py)
    log.info("start")
    import mkl

    if not getattr(mkl, "IS_MKL_RESEARCH", False):
        sys.exit(
            f"error: `import mkl` found {getattr(mkl, '__file__', '?')}, not this project's "
            "library (Intel's mkl-service installs a module of the same name): pip install -e ."
        )
    from threadpoolctl import threadpool_limits

    from mkl._io import CorruptFile, quarantine
    from mkl.datasets import DatasetUnavailable

    try:
        with threadpool_limits(limits=max(1, snakemake.threads)):
            main(snakemake, log)
    except CorruptFile as exc:  # a damaged input: moved aside, so the next run recomputes it
        log.error("%s", exc)
        dest = quarantine(exc.path)
        sys.exit(
            f"error in rule {snakemake.rule} ({dict(snakemake.wildcards)}): {exc}; "
            f"moved to {dest}: run again to recompute it"
        )
    except (ValueError, DatasetUnavailable) as exc:
        log.error("%s", traceback.format_exc())
        sys.exit(f"error in rule {snakemake.rule} ({dict(snakemake.wildcards)}): {exc}")
    except Exception:  # a bug, not bad input: keep the traceback in the rule's log too
        log.exception("unexpected error")
        raise
    log.info("done")


def fit_inputs(snakemake, bank_path, split):
    """What a fit or CV-chunk job works on for one split: the algorithm's kernels
    of the split's bank, the split's inner-CV folds, and a factory of the
    algorithm's estimator (taking the grid point's params)."""
    from functools import partial

    import mkl
    from mkl.bank import KernelBank
    from mkl.datasets import load_split
    from mkl.experiment import estimator

    cfg = snakemake.params.algorithm
    bank = algorithm_bank(KernelBank.load(bank_path), cfg)
    folds = load_split(snakemake.input.splits, split).folds
    name, params = estimator(cfg, snakemake.wildcards.algorithm)
    return bank, folds, partial(mkl.make_estimator, name, **params)


def algorithm_bank(bank, cfg):
    """The kernels an experiment's algorithm entry uses: its ``select`` /
    ``exclude`` criteria applied to the bank (the bank itself if it has none)."""
    if "select" in cfg or "exclude" in cfg:
        return bank.select(include=cfg.get("select"), exclude=cfg.get("exclude"))
    return bank
