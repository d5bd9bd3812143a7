"""The matrix exponential and LAPACK's Householder QR form (``geqrf``).

``matrix_exp`` runs scaling and squaring around the degree-13 Padé approximant (Higham,
"The scaling and squaring method for the matrix exponential revisited", 2005), in double
precision, each matrix of a batch scaled by its own power of two. Its backward is the
adjoint Fréchet derivative, read off the exponential of the block matrix
``[[A^H, G], [0, A^H]]`` (upper-right block), so it is itself made of ``matrix_exp`` and
twice differentiable.
"""
from __future__ import annotations

import math

from ..backend import get_array_module
from .primitive import Primitive
from .shape import cat

# numerator coefficients of the [13/13] Padé approximant of exp (the denominator's are the
# same with alternating signs); theta_13: the largest 1-norm it is accurate for in double
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_array(d):
    xp = get_array_module(d)
    work = d.astype(xp.complex128 if d.dtype.kind == "c" else xp.float64)
    n = work.shape[-1]
    if work.size == 0:
        return d.copy()
    norms = xp.abs(work).sum(axis=-2).max(axis=-1)  # 1-norm of each matrix
    with_room = xp.maximum(norms / _THETA13, 1.0)
    squarings = xp.ceil(xp.log2(with_room)).astype(xp.int64)
    a = work / (2.0 ** squarings)[..., None, None]
    b = _PADE13
    eye = xp.eye(n, dtype=work.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
    r = xp.linalg.solve(v - u, v + u)
    most = int(squarings.max()) if squarings.size else 0
    for step in range(most):
        r = xp.where((squarings > step)[..., None, None], r @ r, r)
    return r.astype(d.dtype)


class MatrixExp(Primitive):
    """``exp(A)`` of each square matrix; backward: the upper-right block of
    ``exp([[A^H, G], [0, A^H]])``."""
    _backward_name = "LinalgMatrixExpBackward0"
    complex_grad = True  # the adjoint Frechet derivative (A^H): right for complex matrices

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _expm_array(a._data)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        n = a.shape[-1]
        a_h = a.mH
        top = cat([a_h, grad], -1)
        bottom = cat([grad.new_zeros(grad.shape), a_h], -1)
        return MatrixExp.apply(cat([top, bottom], -2))[..., :n, n:]


class Geqrf(Primitive):
    """LAPACK's geqrf: R on and above the diagonal, the Householder vectors below it, and
    their scales ``tau``. Not differentiable, as in PyTorch."""
    _backward_name = "GeqrfBackward0"

    @staticmethod
    def forward(ctx, a):
        d = a._data
        xp = get_array_module(d)
        m, n = d.shape[-2:]
        if math.prod(d.shape) == 0:
            tau_shape = d.shape[:-2] + (min(m, n),)
            return d.copy(), xp.zeros(tau_shape, dtype=d.dtype)
        # NumPy's raw mode returns the factor transposed (LAPACK's column-major layout)
        h, tau = xp.linalg.qr(d, mode="raw")
        return xp.ascontiguousarray(xp.swapaxes(h, -1, -2)).astype(d.dtype), tau.astype(d.dtype)

    @staticmethod
    def backward(ctx, grad_a, grad_tau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")
