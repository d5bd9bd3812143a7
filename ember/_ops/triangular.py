"""Private Cholesky factorization and triangular solve, differentiable to any order (their
backward formulas use these ops again). ``ember.distributions.MultivariateNormal`` needs
them; a public ``ember.linalg`` may take them over.
"""
from .._tensor import Tensor
from ..backend import get_array_module
from .primitive import Primitive, unbroadcast


def _triangle(xp, a, upper):
    """``a`` with the other triangle zeroed (the solve reads one triangle only, as LAPACK)."""
    n = a.shape[-1]
    rows = xp.arange(n).reshape(n, 1)
    cols = xp.arange(n).reshape(1, n)
    keep = cols >= rows if upper else cols <= rows
    return xp.where(keep, a, xp.zeros((), a.dtype))


def _not_positive_definite(xp, a):
    """PyTorch's error for the first matrix of ``a`` (a batch) that has no Cholesky factor."""
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    for index in range(flat.shape[0]):
        matrix = flat[index]
        for order in range(1, matrix.shape[-1] + 1):
            try:
                xp.linalg.cholesky(matrix[:order, :order])
            except Exception:  # noqa: BLE001 - the array module's LinAlgError
                where = f"(Batch element {index}): " if batch else ""
                return RuntimeError(
                    f"linalg.cholesky: {where}The factorization could not be completed because "
                    f"the input is not positive-definite (the leading minor of order {order} "
                    f"is not positive-definite).")
    return RuntimeError("linalg.cholesky: The factorization could not be completed because "
                        "the input is not positive-definite.")


class Cholesky(Primitive):
    """Lower Cholesky factor ``L`` of symmetric positive-definite ``A = L L^T`` (the lower
    triangle of ``A`` is read)."""
    _backward_name = "LinalgCholeskyExBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, a):
        d = a._data
        xp = get_array_module(d)
        try:
            return xp.linalg.cholesky(d)
        except Exception:  # noqa: BLE001 - the array module's LinAlgError
            raise _not_positive_definite(xp, d) from None

    @staticmethod
    def backward(ctx, grad):
        factor, = ctx.saved_tensors
        # dA = L^-T Phi(L^T dL) L^-1, symmetrized; Phi: the lower triangle, diagonal halved
        product = factor.mT.matmul(grad.tril())
        eye = _eye_like(product)
        phi = product.tril() - 0.5 * product * eye
        left = solve_triangular(factor.mT, phi, upper=True)
        both = solve_triangular(factor.mT, left.mT, upper=True).mT
        return 0.5 * (both + both.mT)


def _eye_like(t):
    xp = get_array_module(t._data)
    n = t._data.shape[-1]
    return Tensor._make(xp.eye(n, dtype=t._data.dtype))


class TriangularSolve(Primitive):
    """``X`` with ``A X = B`` for triangular ``A`` (batch dimensions broadcast)."""
    _backward_name = "LinalgSolveTriangularBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, a, b, upper):
        ctx.upper, ctx.b_shape = upper, b._data.shape
        ctx.save_for_backward(a)
        xp = get_array_module(a._data)
        return xp.linalg.solve(_triangle(xp, a._data, upper), b._data)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        grad_b = solve_triangular(a.mT, grad, upper=not ctx.upper)
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = -grad_b.matmul(x.mT)
            grad_a = grad_a.triu() if ctx.upper else grad_a.tril()
            grad_a = unbroadcast(grad_a, a._data.shape)
        return grad_a, unbroadcast(grad_b, ctx.b_shape), None


class CholeskyInverse(Primitive):
    """``(L L^T)^-1`` from a lower Cholesky factor ``L``. Its gradient treats ``L`` as a
    full matrix (PyTorch's ``cholesky_inverse`` does), not only its lower triangle."""
    _backward_name = "CholeskyInverseBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, factor):
        ctx.save_for_backward(factor)
        d = factor._data
        xp = get_array_module(d)
        eye = xp.eye(d.shape[-1], dtype=d.dtype)
        inverse = xp.linalg.solve(_triangle(xp, d, False), xp.broadcast_to(eye, d.shape))
        return xp.matmul(xp.swapaxes(inverse, -1, -2), inverse)

    @staticmethod
    def backward(ctx, grad):
        factor, inverse = ctx.saved_tensors
        # d(L L^T)^-1 = -P (dL L^T + L dL^T) P with P = (L L^T)^-1
        m = inverse.matmul(grad).matmul(inverse)
        return -(m + m.mT).matmul(factor)


def cholesky_inverse(factor: Tensor) -> Tensor:
    """``(L L^T)^-1`` of a (batch of) lower Cholesky factors."""
    return CholeskyInverse.apply(factor)


def cholesky(a: Tensor) -> Tensor:
    """Lower Cholesky factor of a (batch of) symmetric positive-definite matrices."""
    return Cholesky.apply(a)


def solve_triangular(a: Tensor, b: Tensor, *, upper: bool) -> Tensor:
    """``A^-1 B`` for a (batch of) triangular ``A``: ``upper`` says which triangle is read."""
    return TriangularSolve.apply(a, b, upper)


__all__ = ["Cholesky", "CholeskyInverse", "TriangularSolve", "cholesky", "cholesky_inverse",
           "solve_triangular"]
