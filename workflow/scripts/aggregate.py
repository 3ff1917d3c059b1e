"""Rule aggregate: fit records -> tables (mean ± std over splits; the paper's
numbers beside); datasets whose download manifest says unavailable are listed
as "not available"."""

from _common import run


def main(snakemake, log):
    import json

    import pandas as pd

    from mkl import experiment, report

    exp = snakemake.params.experiment
    unavailable = {}
    for path in snakemake.input.manifests:
        with open(path) as fh:
            manifest = json.load(fh)
        if manifest.get("status") == "unavailable":
            unavailable[manifest["dataset"]] = manifest["reason"]
    fits = report.collect_fits(snakemake.input.fits)
    fits.to_csv(snakemake.output.per_split, index=False)
    order = {"dataset": exp["datasets"], "algorithm": list(exp["algorithms"])}
    summary = report.summarise(fits, order)
    summary.to_csv(snakemake.output.csv, index=False)
    not_run = [
        (ds, alg)
        for ds in exp["datasets"]
        for alg in exp["algorithms"]
        if not experiment.runs_on(exp, alg, ds)
    ]
    table = report.results_table(
        summary,
        "accuracy",
        100.0,
        exp["datasets"],
        list(exp["algorithms"]),
        list(unavailable),
        not_run,
    )
    missing = "".join(f"\n- {ds}: {reason}" for ds, reason in unavailable.items())
    failed = fits[fits["error"].fillna("").astype(bool)] if len(fits) else fits
    failures = "".join(
        f"\n- {r.dataset} / {r.algorithm} / split {r.split}: {r.error}" for r in failed.itertuples()
    )
    caption = f"# {exp['name']}: test accuracy (%), mean ± std over splits"
    caption += f"\n\n{exp.get('description', '')}"
    if missing:
        caption += f"\n\nNot available:{missing}"
    if failures:
        caption += f"\n\nFailed fits (the error of each):{failures}"
    report.write_table(table, None, snakemake.output.md, caption)
    if "paper" in exp:
        ref = pd.read_csv(snakemake.params.paper_results)
        comparison = report.paper_comparison(summary, ref, exp["paper"], list(unavailable))
        caption = (
            f"# {exp['name']} beside {exp['paper']['name']} (paper numbers from "
            "paper_results.csv; beyond_2sd: |ours - paper| > 2 paper std)"
        )
        if missing:
            caption += f"\n\nNot available:{missing}"
        tables = report.paper_tables(comparison, exp["paper"])
        wide_caption = (
            f"# {exp['name']}: ours (paper), test {exp['paper'].get('metric', 'accuracy')} in %, "
            "mean ± std over splits; * where the two differ by more than two of the paper's "
            f"standard deviations.\n\n{exp.get('description', '')}"
        )
        if missing:
            wide_caption += f"\n\nNot available:{missing}"
    else:
        comparison = pd.DataFrame({"note": ["this experiment names no paper table"]})
        caption = wide_caption = f"# {exp['name']}: no paper comparison"
        tables = {}
    report.write_table(comparison, snakemake.output.paper_csv, snakemake.output.paper_md, caption)
    report.write_paper_tables(
        tables, snakemake.output.paper_tables_md, snakemake.output.paper_tables_tex, wide_caption
    )
    log.info(
        "aggregated %d fit records (%d failed); not available: %s",
        len(fits),
        len(failed),
        sorted(unavailable),
    )


run(snakemake, main)  # noqa: F821
