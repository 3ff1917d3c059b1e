"""The bank-level estimators: one module per algorithm family, the contract they
share (:mod:`~mkl.algorithms.base`), the loop and oracle of the wrapper methods
(:mod:`~mkl.algorithms.wrapper`, :mod:`~mkl.algorithms.domains`,
:mod:`~mkl.algorithms.iterations`) and the registry of their names
(:mod:`~mkl.algorithms.registry`; also :data:`mkl.ALGORITHMS`).

Where each method lives (its registry name, its class and paper, its module):

==========================================  ===============================  =====================
registry name                               class                            module
==========================================  ===============================  =====================
uniform, single_best, linear, fixed         UniformMKL, SingleBestKernel,    baselines
                                            SingleKernelSVM, FixedWeightsMKL
align, alignf, cka                          AlignMKL, AlignFMKL (Cortes      alignment
                                            2012), CKA (MKLpy)
fheuristic, pwmk                            FHeuristic (Qiu & Lane 2009),    alignment
                                            PWMK (Tanabe 2008)
rmkl, gram                                  RMKL (Do 2009), GRAM             radius_margin
                                            (Lauriola 2017)
simplemkl                                   SimpleMKL (Rakotomamonjy 2008)   l1 (the simplex)
silp                                        SILP (Sonnenburg 2006)           l1
level                                       LevelMKL (Xu 2009)               l1
lp_newton, lp_cutting_plane, lp_analytic    LpNewton, LpCuttingPlane,        lp (the lp ball;
                                            LpAnalytic (Kloft 2009)          Kloft et al. 2009)
gmkl                                        GMKL (Yang 2011)                 gmkl (elastic net)
spg                                         SPGMKL (Jain 2012)               spg (either set)
smkl                                        SMKL (Xu 2010)                   smkl
spicymkl                                    SpicyMKL (Suzuki & Tomioka)      spicy
easymkl, memo                               EasyMKL (Aiolli & Donini 2015),  margin
                                            MEMO (Lauriola 2018)
denoise, flip, shift, similarity_features   Denoise, Flip, Shift,            eigen_transforms
                                            SimilarityFeaturesSVM
indsvm, eskl, emkl, rekl                    IndSVM (Luss & d'Aspremont),     indefinite
                                            ESKL, EMKL, REKL (Kundu 2010)
(EMKL's and REKL's inner MKL)               nonsparse_mkl (Nath 2009)        nonsparse
==========================================  ===============================  =====================

The weight sets of the wrapper methods (simplex, lp ball, elastic-net ball)
and their subproblems (cutting-plane models, level projections) are in
:mod:`~mkl.algorithms.domains`; the step of each wrapper method is its
class's ``_step`` in the module above.

This file imports nothing: the library's modules import the concrete modules
they use, so that the workflow's source hashes, which follow imports, see them.
"""
