"""Snakemake's own share of a run's wall time, from one finished run.

Every job's log (results/logs/...) starts with a "start" line and ends with
"done" (mkl/workflow/jobs.py), so the jobs' own time is known to the
millisecond. With c cores and wall time W (given, or from the first start to
the last done), the time Snakemake did not spend running job code is

    overhead = W - sum(job times) / c,    as a fraction of W.

This also counts the cores left idle where the DAG allows no parallelism
(downloads before splits, the final aggregate), so it is an upper bound on
the scheduler's and job start-up's cost.

    python benchmarks/workflow_overhead.py results/logs --cores 2 [--wall SECONDS]
        [--only NAME] [--since "YYYY-MM-DD HH:MM:SS"]
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path


def job_spans(logs: Path, only: str | None = None) -> list[tuple[str, float, float]]:
    """(rule, start, end) in seconds since the epoch, for every complete job log
    (whose path names ``only``, e.g. an experiment, if given)."""
    spans = []
    for path in logs.rglob("*.log"):
        if only and only not in path.relative_to(logs).parts:
            continue
        lines = [ln for ln in path.read_text().splitlines() if ln[:4].isdigit()]
        starts = [ln for ln in lines if ln.endswith(" start")]
        ends = [ln for ln in lines if ln.endswith(" done")]
        if not starts or not ends:
            continue
        t0 = datetime.strptime(starts[-1][:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
        t1 = datetime.strptime(ends[-1][:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
        if t1 >= t0:
            spans.append((path.relative_to(logs).parts[0], t0, t1))
    return spans


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", type=Path, help="the run's results/logs folder")
    ap.add_argument("--cores", type=int, required=True)
    ap.add_argument("--wall", type=float, help="the run's wall time in seconds")
    ap.add_argument("--only", help="only logs with this path component (an experiment)")
    ap.add_argument("--since", help="only jobs started at or after this local time (one run)")
    args = ap.parse_args()
    spans = job_spans(args.logs, args.only)
    if args.since:
        t0 = datetime.strptime(args.since, "%Y-%m-%d %H:%M:%S").timestamp()
        spans = [sp for sp in spans if sp[1] >= t0]
    if not spans:
        raise SystemExit(f"no job log with start and done lines under {args.logs}")
    wall = args.wall or (max(e for _, _, e in spans) - min(s for _, s, _ in spans))
    busy = sum(e - s for _, s, e in spans)
    by_rule: dict[str, list[float]] = {}
    for rule, s, e in spans:
        by_rule.setdefault(rule, []).append(e - s)
    print(f"{len(spans)} jobs, wall {wall:.0f} s on {args.cores} cores")
    for rule, times in sorted(by_rule.items(), key=lambda kv: -sum(kv[1])):
        median = sorted(times)[len(times) // 2]
        print(f"  {rule:<16}{len(times):>6} jobs {sum(times):>9.1f} s  (median {median:.2f} s)")
    overhead = wall - busy / args.cores
    print(
        f"job time {busy:.0f} s; overhead {overhead:.0f} s = {overhead / wall:.1%} of the wall time"
    )


if __name__ == "__main__":
    main()
