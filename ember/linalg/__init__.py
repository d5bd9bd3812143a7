"""``ember.linalg``: PyTorch's ``torch.linalg`` -- inverses, determinants, solves, the
Cholesky, QR, SVD and symmetric eigen-decompositions, least squares, pseudo-inverse, norms
and products, batched over leading dims and differentiable (twice, where PyTorch is).

>>> import ember
>>> A = ember.tensor([[4., 1.], [1., 3.]], requires_grad=True)
>>> ember.linalg.det(A).backward()
>>> A.grad
tensor([[ 3., -1.],
        [-1.,  4.]])
"""
from ._decompositions import (LinAlgError, inv, inv_ex, det, slogdet, solve, solve_ex,
                              solve_triangular, cholesky, cholesky_ex, qr, svd, svdvals, eigh,
                              eigvalsh, pinv, matrix_rank, lstsq)
from ._norms import (vector_norm, matrix_norm, norm, cross, matmul, diagonal, multi_dot,
                     vecdot, matrix_power)
from ._matrix_functions import matrix_exp, householder_product
from ._lu import (lu_factor, lu_factor_ex, lu_ as lu, lu_solve_ as lu_solve, ldl_factor,
                  ldl_factor_ex, ldl_solve)
from ._conditioning import cond, tensorinv, tensorsolve, vander, eig, eigvals

__all__ = ["LinAlgError", "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex",
           "solve_triangular", "cholesky", "cholesky_ex", "qr", "svd", "svdvals", "eigh",
           "eigvalsh", "pinv", "matrix_rank", "lstsq", "vector_norm", "matrix_norm", "norm",
           "cross", "matmul", "diagonal",
           "multi_dot", "vecdot", "matrix_power", "matrix_exp", "householder_product",
           "lu_factor", "lu_factor_ex", "lu", "lu_solve", "ldl_factor", "ldl_factor_ex",
           "ldl_solve", "cond", "tensorinv", "tensorsolve", "vander", "eig", "eigvals"]

from .._torch_function import wrap_namespace as _wrap_namespace  # noqa: E402

_wrap_namespace(globals(), [n for n in __all__ if n != "LinAlgError"], "ember.linalg")
