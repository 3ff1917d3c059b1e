"""Rule split: R seeded train/test splits with inner CV folds (stratified by
class, except for a regression dataset's real targets)."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl.workflow.dataset import Dataset
    from mkl.workflow.splits import make_splits, save_splits

    p = snakemake.params.protocol
    ds = Dataset.load(snakemake.input[0])
    splits = make_splits(
        ds.y,
        p["repetitions"],
        p["train_fraction"],
        p["inner_folds"],
        p["seed"],
        balanced=p.get("balanced_classes", False),
        stratified=not ds.real_target,
        fresh_draws=p.get("fresh_draws", False),
    )
    save_splits(snakemake.output[0], splits, {"seed": p["seed"], "dataset": ds.attrs["dataset"]})
    log.info(
        "%d splits, %d train / %d test", len(splits), len(splits[0].train), len(splits[0].test)
    )


run(snakemake, main)  # noqa: F821
