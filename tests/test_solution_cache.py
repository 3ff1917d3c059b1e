"""Solutions shared within one model-selection fold (mkl/solution_cache.py)."""

import numpy as np

from mkl.solvers.libsvm import solve_svm_dual
from mkl.solvers.solution_cache import shared_solution, shared_solutions

from .conftest import random_problem


def test_shared_solution_solves_each_problem_once_inside_a_block_only(rng):
    _, y, K = random_problem(rng, n=30, M=3)
    calls = []

    def solve():
        calls.append(1)
        return solve_svm_dual(K[0], y, 1.0)

    w, other = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    shared_solution(K, w, y, ("C-SVM", 1.0), solve)
    shared_solution(K, w, y, ("C-SVM", 1.0), solve)
    assert len(calls) == 2  # outside a block every call solves
    with shared_solutions():
        first = shared_solution(K, w, y, ("C-SVM", 1.0), solve)
        again = shared_solution(K, w, y, ("C-SVM", 1.0), solve)
        assert len(calls) == 3
        np.testing.assert_array_equal(again.dual_coef, first.dual_coef)
        again.dual_coef[:] = 0  # each caller gets its own copy
        assert np.any(shared_solution(K, w, y, ("C-SVM", 1.0), solve).dual_coef != 0)
        # another combination, other labels, other settings or another bank: solved anew
        shared_solution(K, other, y, ("C-SVM", 1.0), solve)
        shared_solution(K, w, -y, ("C-SVM", 1.0), solve)
        shared_solution(K, w, y, ("C-SVM", 10.0), solve)
        shared_solution(K.copy(), w, y, ("C-SVM", 1.0), solve)
        assert len(calls) == 7
    shared_solution(K, w, y, ("C-SVM", 1.0), solve)
    assert len(calls) == 8  # the block's solutions are gone with it
