"""The LU, LDL and general eigen decompositions (kernels of ``ember.linalg.lu_factor``,
``ldl_factor``, ``eig`` and the ops built on them).

NumPy has no LU or LDL routine, so the factorizations run LAPACK's ``getrf`` / ``sytrf`` /
``sytrs`` through SciPy (a dependency of ember, imported on first use: it is slow to
import) matrix by matrix on a host copy, and the results go back to the data's array
module, as ``special_functions.host_special`` does. Pivots are LAPACK's: 1-based int32 row
interchanges, as PyTorch returns them. The general eigen-decomposition also runs on the
host (CuPy has no ``eig``); ``Eig`` is its differentiable form.

``LuFactor`` is differentiable (backward below, written with ember ops, so twice);
``lu``, ``lu_solve``, ``lu_unpack`` are composed from it in ``ember/linalg/_lu.py``.
The LDL ops have no derivative in PyTorch: their backward raises PyTorch's error.
"""
from __future__ import annotations

import math

import numpy as np  # the host kernels (on host copies, see _host_matrices)

from .._tensor import Tensor
from ..backend import get_array_module, to_host
from ..backend.meta import is_meta
from .decompositions import _SavesOutputs, solve
from .primitive import Primitive
from .linalg import matmul
from .shape import cat


def _back(xp, host):
    """A host result in the data's module."""
    return host if xp is np else xp.asarray(host)


def _host_matrices(d):
    """``d`` on the host as one stack of matrices (an explicit count: the batch may be
    empty, and -1 cannot be inferred for 0 x 0 matrices)."""
    host = to_host(d)
    return host.reshape((math.prod(host.shape[:-2]),) + host.shape[-2:])


def _lapack(name, host):
    import scipy.linalg  # slow to import: only when a factorization first runs
    return scipy.linalg.get_lapack_funcs((name,), (host,))[0]


# ---- LU ---------------------------------------------------------------------------------------
def lu_factor_arrays(d):
    """``(LU, pivots, info)`` of every matrix of ``d`` (getrf's, pivots 1-based int32)."""
    xp = get_array_module(d)
    m, n = d.shape[-2:]
    k = min(m, n)
    batch = d.shape[:-2]
    if is_meta(d):
        return (xp.empty(d.shape, d.dtype), xp.empty(batch + (k,), np.int32),
                xp.empty(batch, np.int32))
    flat = _host_matrices(d)
    lu = np.array(flat, copy=True)
    piv = np.empty((flat.shape[0], k), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    if k:
        getrf = _lapack("getrf", flat)
        for i, a in enumerate(flat):
            lu[i], p, info[i] = getrf(a)
            piv[i] = p[:k] + 1
    return (_back(xp, lu.reshape(d.shape)), _back(xp, piv.reshape(batch + (k,))),
            _back(xp, info.reshape(batch)))


def permutation(pivots, m):
    """The row order ``perm`` (host int64, batched) with ``(P^T A)[i] = A[perm[i]]`` for
    LAPACK's 1-based ``pivots`` of an ``m``-row matrix: its swaps applied in turn."""
    piv = to_host(pivots).astype(np.int64) - 1
    batch = piv.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    count = math.prod(batch)
    flat_perm = perm.reshape(count, m)
    flat_piv = piv.reshape(count, piv.shape[-1])
    rows = np.arange(flat_perm.shape[0])
    for i in range(flat_piv.shape[1]):
        j = flat_piv[:, i]
        here = flat_perm[:, i].copy()
        flat_perm[:, i] = flat_perm[rows, j]
        flat_perm[rows, j] = here
    return perm


def permutation_matrix(pivots, m, like):
    """``P`` (``A = P L U``) in ``like``'s dtype and module, batched as ``pivots``."""
    xp = get_array_module(like)
    batch = pivots.shape[:-1]
    if is_meta(pivots) or is_meta(like):
        return xp.zeros(batch + (m, m), like.dtype)
    perm = permutation(pivots, m)
    p = np.zeros(batch + (m, m), dtype=like.dtype)
    np.put_along_axis(p, perm[..., :, None], 1, axis=-1)  # row i of P^T has its 1 at perm[i]
    return _back(xp, np.swapaxes(p, -1, -2).copy())


def unit_lower(lu, k):
    """L (``m x k``, ones on the diagonal) from a packed LU, differentiably."""
    m = lu._data.shape[-2]
    xp = get_array_module(lu._data)
    eye = Tensor._make(xp.eye(m, k, dtype=lu._data.dtype))
    return lu[..., :, :k].tril(-1) + eye


def upper(lu, k):
    """U (``k x n``) from a packed LU, differentiably."""
    return lu[..., :k, :].triu()


def _tri_solve(tri, rhs, left=True):
    """``tri^-1 rhs`` (``left=False``: ``rhs tri^-1``) for a triangular ``tri``."""
    if left:
        return solve(tri, rhs, False)
    return solve(tri.mT, rhs.mT, False).mT


class LuFactor(_SavesOutputs):
    """``(LU, pivots, info)``: getrf's packed factors of ``A = P L U``. Backward (the
    matrix-calculus formula for partial-pivoting LU, wide and tall matrices included)
    maps the gradient of the packed factors to ``A``."""
    _backward_name = "LinalgLuFactorExBackward0"
    complex_grad = True  # lu_backward's conjugate transposes: right for complex matrices

    @staticmethod
    def forward(ctx, a):
        return lu_factor_arrays(a._data)

    @staticmethod
    def backward(ctx, g_lu, g_pivots, g_info):
        if g_lu is None:
            return None
        lu, pivots, _ = ctx.outputs()
        m, n = lu._data.shape[-2:]
        k = min(m, n)
        g_l, g_u = g_lu[..., :, :k].tril(-1), g_lu[..., :k, :].triu()
        ga = lu_backward(unit_lower(lu, k), upper(lu, k), g_l, g_u)
        return matmul(Tensor._make(permutation_matrix(pivots._data, m, lu._data)), ga)


def lu_backward(low, up, g_l, g_u):
    """``P^T gA`` for ``A = P L U`` given the gradients of L (strictly lower) and U
    (upper). Square: ``L^-H (tril_-1(L^H gL) + triu(gU U^H)) U^-H``; a wide matrix's
    extra columns of U and a tall one's extra rows of L enter through their own terms
    (conjugate transposes: right for complex matrices too)."""
    m, k = low._data.shape[-2:]
    n = up._data.shape[-1]
    if m == n:
        inner = matmul(low.mH, g_l).tril(-1) + matmul(g_u, up.mH).triu()
        return _tri_solve(low.mH, _tri_solve(up.mH, inner, left=False))
    if m < n:
        u1, u2 = up[..., :m], up[..., m:]
        gu1, gu2 = g_u[..., :m], g_u[..., m:]
        inner = (matmul(low.mH, g_l) - matmul(gu2, u2.mH)).tril(-1) + matmul(gu1, u1.mH).triu()
        ga1 = _tri_solve(low.mH, _tri_solve(u1.mH, inner, left=False))
        return cat([ga1, _tri_solve(low.mH, gu2)], -1)
    l1, l2 = low[..., :n, :], low[..., n:, :]
    gl1, gl2 = g_l[..., :n, :], g_l[..., n:, :]
    inner = matmul(l1.mH, gl1).tril(-1) + (matmul(g_u, up.mH) - matmul(l2.mH, gl2)).triu()
    ga1 = _tri_solve(l1.mH, _tri_solve(up.mH, inner, left=False))
    return cat([ga1, _tri_solve(up.mH, gl2, left=False)], -2)


# ---- LDL (no derivative in PyTorch) -----------------------------------------------------------
class _NoDerivative(Primitive):
    """An op PyTorch has no derivative for: its result still requires grad, and backward
    raises PyTorch's error."""
    _aten = ""

    @classmethod
    def backward(cls, ctx, *grads):
        raise RuntimeError(f"derivative for aten::{cls._aten} is not implemented")


def ldl_factor_arrays(d):
    """``(LD, pivots, info)`` of sytrf (lower triangle) for every matrix of ``d``; LD's
    strict upper triangle zeroed, as PyTorch returns it."""
    xp = get_array_module(d)
    n = d.shape[-1]
    batch = d.shape[:-2]
    if is_meta(d):
        return (xp.empty(d.shape, d.dtype), xp.empty(batch + (n,), np.int32),
                xp.empty(batch, np.int32))
    flat = _host_matrices(d)
    ld = np.zeros_like(flat)
    piv = np.empty((flat.shape[0], n), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    if n:
        sytrf = _lapack("sytrf", flat)
        for i, a in enumerate(flat):
            f, piv[i], info[i] = sytrf(a, lower=1)
            ld[i] = np.tril(f)
    return (_back(xp, ld.reshape(d.shape)), _back(xp, piv.reshape(batch + (n,))),
            _back(xp, info.reshape(batch)))


class LdlFactor(_NoDerivative):
    _backward_name = "LinalgLdlFactorExBackward0"
    _aten = "linalg_ldl_factor_ex"

    @staticmethod
    def forward(ctx, a):
        return ldl_factor_arrays(a._data)


class LdlSolve(_NoDerivative):
    """``A^-1 B`` from sytrf's factors (batch dims of ``B`` broadcast with ``LD``'s)."""
    _backward_name = "LinalgLdlSolveBackward0"
    _aten = "linalg_ldl_solve"

    @staticmethod
    def forward(ctx, ld, pivots, b):
        d, bd = ld._data, b._data
        xp = get_array_module(d)
        batch = np.broadcast_shapes(d.shape[:-2], bd.shape[:-2])
        shape = batch + bd.shape[-2:]
        if is_meta(d) or is_meta(bd):
            return xp.empty(shape, bd.dtype)
        n = d.shape[-1]
        full_ld = _host_matrices(np.broadcast_to(to_host(d), batch + d.shape[-2:]))
        full_piv = np.broadcast_to(to_host(pivots._data), batch + (n,)).reshape(-1, n)
        full_b = _host_matrices(np.broadcast_to(to_host(bd), shape))
        out = np.array(full_b, copy=True)
        if n and out.size:
            sytrs = _lapack("sytrs", full_ld)
            for i in range(out.shape[0]):
                out[i], _ = sytrs(full_ld[i], full_piv[i].astype(np.int32), full_b[i], lower=1)
        return _back(xp, out.reshape(shape))


# ---- general eigen-decomposition ---------------------------------------------------------------
def eig_arrays(d, vectors):
    """``(eigenvalues, eigenvectors)`` (complex; vectors None unless ``vectors``) of each
    matrix of ``d``, computed on the host. A matrix holding inf or NaN gets NaN
    eigenvalues (LAPACK's own answer there is undefined)."""
    xp = get_array_module(d)
    ctype = np.result_type(d.dtype, np.complex64)
    n = d.shape[-1]
    batch = d.shape[:-2]
    if is_meta(d):
        return xp.empty(batch + (n,), ctype), (xp.empty(d.shape, ctype) if vectors else None)
    host = to_host(d)
    finite = np.isfinite(host).all(axis=(-2, -1)) if host.size else np.ones(batch, bool)
    clean = np.where(finite[..., None, None], host, 0)
    if vectors:
        w, v = np.linalg.eig(clean)
        v = v.astype(ctype, copy=False)
    else:
        w, v = np.linalg.eigvals(clean), None
    w = np.where(finite[..., None], w.astype(ctype, copy=False), complex("nan+nanj"))
    return _back(xp, w), (None if v is None else _back(xp, v))


class Eig(_SavesOutputs):
    """``(eigenvalues, eigenvectors)`` of ``A V = V diag(L)`` (complex, vectors of unit norm,
    LAPACK geev's), for a gradient. Backward: ``gA = V^-H (diag(gL) + (V^H gV - V^H V
    diag(Re(diag(V^H gV)))) / conj(E)) V^H`` with ``E_ij = L_j - L_i`` off the diagonal;
    each vector is defined up to a phase ``e^{i phi}``, so a loss that depends on it
    (an imaginary diagonal of ``V^H gV``) raises PyTorch's error. A real input gets the
    real part of ``gA``."""
    _backward_name = "LinalgEigBackward0"
    complex_grad = True

    @staticmethod
    def forward(ctx, a):
        w, v = eig_arrays(a._data, True)
        return w, v

    @staticmethod
    def backward(ctx, gl, gv):
        w, v = ctx.outputs()
        n = w._data.shape[-1]
        xp = get_array_module(w._data)
        eye = Tensor._make(xp.eye(n, dtype=w._data.dtype))
        inner = None if gl is None else gl.diag_embed()
        if gv is not None:
            vhgv = matmul(v.mH, gv)
            im = vhgv.diagonal(0, -2, -1).imag._data
            if not is_meta(im) and not bool(xp.allclose(im, 0, rtol=1e-2, atol=1e-2)):
                raise RuntimeError(_EIG_PHASE)
            diag = vhgv.diagonal(0, -2, -1).real.to(v.dtype)
            off = vhgv - matmul(v.mH, v) * diag.unsqueeze(-2)
            gaps = (w.unsqueeze(-2) - w.unsqueeze(-1)).conj() + eye
            off = off / gaps * (1 - eye)
            inner = off if inner is None else inner + off
        if inner is None:
            return None
        return solve(v.mH, matmul(inner, v.mH))


_EIG_PHASE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this "
              "quantity, so it is ill-defined.")


__all__ = ["lu_factor_arrays", "permutation", "permutation_matrix", "unit_lower", "upper",
           "LuFactor", "lu_backward", "LdlFactor", "LdlSolve", "ldl_factor_arrays",
           "eig_arrays", "Eig"]
