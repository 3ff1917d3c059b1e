"""Generalized MKL with elastic-net weights (Yang, Xu, King, Lyu, IEEE TNN 2011):
min J(theta) over Theta = {theta >= 0 : v ||theta||_1 + (1 - v) ||theta||_2^2 <= 1}
by the level method (Algorithm 1): the same update as the L1 level method
(``l1.LevelMKL``) over Theta, whose cutting-plane problem (23) is a linear
objective under a quadratic constraint and whose projection (26) a QP under it,
both second-order cone programs solved by Clarabel (``domains.py``). The start
is theta0 = c 1 with (1 - v) c^2 + v c = 1/M, on the boundary of Theta.
The level parameter follows ``l1.LevelMKL`` (``tau=0.9`` gives the paper's
0.9 -> 0.99 schedule; the default 0.3 converges in far fewer iterations), and
so does ``inexact`` (warm SVM solves to a precision tied to the gap).
"""

from __future__ import annotations

from .domains import ElasticNetBall
from .l1 import LevelMKL


class GMKL(LevelMKL):
    """Elastic-net MKL: ``v`` = 1 is L1-MKL, ``v`` = 0 is L2-MKL (lp with p = 2)."""

    def __init__(
        self,
        C=1.0,
        v=0.5,
        tol=1e-2,
        max_iter=500,
        svm_tol=1e-3,
        tau=0.3,
        weight_tol=None,
        verbose=0,
        task="classification",
        multiclass="ovr",
        inexact=False,
    ):
        super().__init__(
            C=C,
            tol=tol,
            max_iter=max_iter,
            svm_tol=svm_tol,
            tau=tau,
            weight_tol=weight_tol,
            verbose=verbose,
            task=task,
            multiclass=multiclass,
            inexact=inexact,
        )
        self.v = v

    def _domain(self):
        return ElasticNetBall(self.v)
