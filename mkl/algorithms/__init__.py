"""One module per algorithm family; ``ALGORITHMS`` maps the registry names used
in config files and result tables (docs/design.md) to estimator classes."""

from .baselines import SingleBestKernel, SingleKernelSVM, UniformMKL
from .gmkl import GMKL
from .indefinite import EMKL, ESKL, REKL, Denoise, Flip, IndSVM, Shift, SimilarityFeaturesSVM
from .l1 import SILP, LevelMKL, SimpleMKL
from .lp import LpAnalytic, LpCuttingPlane, LpNewton
from .margin import MEMO, EasyMKL
from .smkl import SMKL

ALGORITHMS = {
    "uniform": UniformMKL,
    "single_best": SingleBestKernel,
    "linear": SingleKernelSVM,
    "simplemkl": SimpleMKL,
    "silp": SILP,
    "level": LevelMKL,
    "lp_newton": LpNewton,
    "lp_cutting_plane": LpCuttingPlane,
    "lp_analytic": LpAnalytic,
    "gmkl": GMKL,
    "smkl": SMKL,
    "easymkl": EasyMKL,
    "memo": MEMO,
    "denoise": Denoise,
    "flip": Flip,
    "shift": Shift,
    "similarity_features": SimilarityFeaturesSVM,
    "indsvm": IndSVM,
    "eskl": ESKL,
    "emkl": EMKL,
    "rekl": REKL,
}

__all__ = ["ALGORITHMS", *sorted(c.__name__ for c in ALGORITHMS.values())]
