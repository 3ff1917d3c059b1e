"""The start-up every rule script shares (``workflow/scripts/*.py`` call
:func:`run`): logging to the rule's log file, a check that ``import mkl`` found
this project's library, the job's thread count for BLAS, and the error policy.

Error policy of a job:

* expected failures (a configuration or input the job cannot use, a dataset
  that cannot be obtained): one error line naming the rule, its wildcards and
  the problem, on stderr and in the log; the job fails;
* a damaged input (:class:`mkl._io.CorruptFile`): moved to
  ``results/quarantine/`` so that the next run recomputes it; the job fails;
* anything else (a bug, ``MemoryError``): the traceback goes to the log and
  the exception propagates, so the job fails and Snakemake retries it (with
  the larger resources of the next attempt).

Fits are more forgiving: a fit that fails on its data is a record, not a job
failure (``mkl.workflow.evaluation``).
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (its lines joined by " | ")."""
    return " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def run(snakemake, main) -> None:
    """Run ``main(snakemake, log)`` under the policy above."""
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

    from .._io import CorruptFile
    from .fetch import DatasetUnavailable
    from .files import quarantine

    where = f"rule {snakemake.rule} ({dict(snakemake.wildcards)})"
    try:
        with threadpool_limits(limits=max(1, snakemake.threads)):
            main(snakemake, log)
    except CorruptFile as exc:  # a damaged input: moved aside, so the next run recomputes it
        log.error("%s", exc)
        dest = quarantine(exc.path)
        sys.exit(f"error in {where}: {one_line(exc)}; moved to {dest}: run again to recompute it")
    except (ValueError, DatasetUnavailable) as exc:
        log.error("%s", traceback.format_exc())
        sys.exit(f"error in {where}: {one_line(exc)}")
    except Exception:  # a bug, or out of memory: keep the traceback in the rule's log too
        log.exception("unexpected error")
        raise
    log.info("done")


def job_experiments(snakemake, digests: Mapping[str, str]) -> dict[str, dict]:
    """The experiments a job reads, by name (``digests``: name -> the digest its
    rule passed, :func:`mkl.workflow.config.experiment_digest`), loaded from the
    run's files with the schemas beside the job's script (``workflow/schemas``)."""
    from .config import load_job_experiments

    schemas = Path(snakemake.scriptdir).parent / "schemas"
    return load_job_experiments(snakemake.config, digests, schemas)


def job_experiment(snakemake) -> dict:
    """The experiment of a job whose params are ``experiment`` (its name) and
    ``experiment_digest``."""
    name = snakemake.params.experiment
    return job_experiments(snakemake, {name: snakemake.params.experiment_digest})[name]
