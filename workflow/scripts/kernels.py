"""Rule kernels: the kernel bank of one split (mkl.workflow.banks)."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    import mkl
    from mkl.workflow.banks import split_bank
    from mkl.workflow.dataset import Dataset
    from mkl.workflow.splits import load_split

    w = snakemake.wildcards
    bank = split_bank(
        Dataset.load(snakemake.input.data),
        load_split(snakemake.input.splits, int(w.split)),
        snakemake.params.bank,
        snakemake.params.scaling,
        attrs={
            "experiment": w.experiment,
            "dataset": w.dataset,
            "split": int(w.split),
            "mkl_version": mkl.__version__,
        },
    )
    bank.save(snakemake.output[0])
    log.info(
        "bank: %d kernels, %d training and %d test points, %s",
        bank.n_kernels,
        bank.n_train,
        bank.n_test,
        bank.train if bank.factored else bank.train.dtype,
    )


run(snakemake, main)  # noqa: F821
