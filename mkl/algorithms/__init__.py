"""One module per algorithm family; ``ALGORITHMS`` maps the registry names used
in config files and result tables (DESIGN.md) to estimator classes."""

from .baselines import SingleBestKernel, SingleKernelSVM, UniformMKL

ALGORITHMS = {
    "uniform": UniformMKL,
    "single_best": SingleBestKernel,
    "linear": SingleKernelSVM,
}

__all__ = ["ALGORITHMS", "SingleBestKernel", "SingleKernelSVM", "UniformMKL"]
