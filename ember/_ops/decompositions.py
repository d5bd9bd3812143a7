"""Matrix functions and decompositions (``ember.linalg``'s kernels).

Forward runs the array module's LAPACK routines (``xp.linalg``), batched over leading
dims; backward is the usual matrix-calculus formula written with ember ops, so every
op here is twice differentiable. Ops whose gradient reads their own outputs (inv, det,
the decompositions) keep them as ``SavedTensor`` records (no reference cycle) through
``apply_saving_outputs``.

Failures PyTorch reports from LAPACK's ``info`` (a zero pivot, a matrix that is not
positive-definite) raise ``LinAlgError`` with PyTorch's message; the index it names is
found again on the host, on the error path only.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd.graph import saved_tensor, FREED_MESSAGE
from ..backend import get_array_module, to_host
from ..backend.dtypes import float16
from .primitive import Primitive, PrimitiveNode
from .complex_ops import cj
from . import complex_linalg as CL
from .linalg import matmul
from .shape import cat
from .diagonals import DiagEmbed


class _LinAlgError(RuntimeError):
    """A matrix function failed on its input (singular, not positive-definite); PyTorch's
    ``torch.linalg.LinAlgError``, a ``RuntimeError``.

    >>> import ember
    >>> issubclass(ember.linalg.LinAlgError, RuntimeError)
    True
    """


_LinAlgError.__module__ = "ember.linalg"


# ---- argument checks (PyTorch's wording) --------------------------------------------------
def check_float(x, name):
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {x.dtype.scalar_name}")
    if x.dtype is float16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")


def check_matrix(x, name, arg="A"):
    if x._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def check_square(x, name):
    check_matrix(x, name)
    m, n = x._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")


def check_square_float(x, name):
    check_square(x, name)
    check_float(x, name)


def batch_prefix(shape, index):
    """PyTorch's ``(Batch element k): `` for a batched input (nothing for one matrix)."""
    return f"(Batch element {index}): " if len(shape) > 2 else ""


# ---- saved outputs ------------------------------------------------------------------------
class _OutputsNode(PrimitiveNode):
    """Node of an op whose backward reads its outputs: they are dropped with the rest.
    An output that got no gradient reaches backward as None, not zeros: PyTorch's
    formulas then skip the terms that would divide by eigenvalue gaps (``eigvalsh`` of a
    matrix with repeated eigenvalues has a finite gradient)."""
    _saved_outputs = None
    _materialize_grads = False

    def _release(self):
        PrimitiveNode._release(self)
        self._saved_outputs = None

    def outputs(self):
        """The op's outputs as tensors of this node (checked for in-place changes)."""
        saved = self._saved_outputs
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        outs = [s.unpack(self) for s in saved]
        if forward_ad.active:  # rebuilt outputs get their tangents back (forward-over-reverse)
            outs = [forward_ad.reattach_output_tangent(self, o, nr) for nr, o in enumerate(outs)]
        return outs


def apply_saving_outputs(cls, *args):
    """``cls.apply(*args)``, keeping the outputs for backward when a graph was built."""
    out = cls.apply(*args)
    outs = out if isinstance(out, tuple) else (out,)
    if _under_vmap(outs[0]):
        return out
    node = outs[0]._grad_fn
    if node is not None and isinstance(node, cls._backward_cls):
        node._saved_outputs = [saved_tensor(o, nr) for nr, o in enumerate(outs)]
    return out


def _under_vmap(t):
    """Whether ``t`` is a result batched by vmap: its node is the op's run on the physical
    batch, whose outputs (and the shapes backward needs) the batching rule already kept
    (it runs the op through ``jvp_rerun``); the batched wrappers must not replace them."""
    return t._vmap_level is not None


class _SavesOutputs(Primitive):
    _node_base = _OutputsNode


def _zeros_like(t):
    return Tensor._make(get_array_module(t._data).zeros(t._data.shape, dtype=t._data.dtype))


def _eye_like(x, n):
    xp = get_array_module(x._data)
    return Tensor._make(xp.eye(n, dtype=x._data.dtype))


def _diag_embed(v):
    """A vector (batched) as a diagonal matrix, differentiably."""
    return DiagEmbed.apply(v, 0, -2, -1)


# ---- lu-based: inverse, determinant, solve ------------------------------------------------
def zero_pivot(matrix):
    """LAPACK getrf's info for one matrix (host array): the 1-based index of the first
    exactly-zero pivot of LU with partial pivoting, 0 when there is none."""
    a = np.array(matrix, dtype=np.result_type(matrix.dtype, np.float32))
    n = a.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return 0


def _matrices(host):
    """A batch of matrices as one stack (an explicit count: -1 cannot be inferred when
    the matrices are 0 x 0)."""
    return host.reshape((math.prod(host.shape[:-2]),) + host.shape[-2:])


def singular_infos(data):
    """getrf's info of every matrix of a batch (host-side, for errors and ``inv_ex``)."""
    host = to_host(data)
    flat = _matrices(host)
    return np.array([zero_pivot(m) for m in flat], dtype=np.int32).reshape(host.shape[:-2])


def raise_singular_inverse(data, name="linalg.inv"):
    infos = singular_infos(data)
    bad = np.flatnonzero(infos)
    k = int(bad[0]) if bad.size else 0
    info = int(infos.reshape(-1)[k]) if bad.size else 1
    raise _LinAlgError(f"{name}: {batch_prefix(data.shape, k)}The diagonal element {info} is "
                       "zero, the inversion could not be completed because the input matrix is "
                       "singular.")


def inverse_array(d, name="linalg.inv"):
    xp = get_array_module(d)
    try:
        return xp.linalg.inv(d)
    except np.linalg.LinAlgError:
        raise_singular_inverse(d, name)


class Inv(_SavesOutputs):
    """``A^-1``; backward ``-A^-H g A^-H``. ``check=False`` (``inv_ex``): a singular matrix
    gives NaN instead of an error (its ``info`` says so)."""
    _backward_name = "LinalgInvExBackward0"
    complex_grad = True  # conjugate transposes: right for complex matrices

    @staticmethod
    def forward(ctx, a, check=True, name="linalg.inv"):
        d = a._data
        if check:
            return inverse_array(d, name)
        xp = get_array_module(d)
        try:
            return xp.linalg.inv(d)
        except np.linalg.LinAlgError:
            return _per_matrix_or_nan(xp.linalg.inv, d)

    @staticmethod
    def backward(ctx, grad):
        inv, = ctx.outputs()
        inv_h = inv.mH
        return -matmul(inv_h, matmul(grad, inv_h)), None, None


def _per_matrix_or_nan(fn, d):
    """``fn`` on each matrix of ``d``; NaN for those it fails on."""
    xp = get_array_module(d)
    flat = d.reshape((-1,) + d.shape[-2:])
    out = xp.full(flat.shape, float("nan"), dtype=d.dtype)
    for i in range(flat.shape[0]):
        try:
            out[i] = fn(flat[i])
        except np.linalg.LinAlgError:
            pass
    return out.reshape(d.shape)


class Det(_SavesOutputs):
    """``det(A)``; backward ``g conj(det A) A^-H`` (by a solve), or through the SVD where a
    matrix of the batch is singular."""
    _backward_name = "LinalgDetBackward0"
    complex_grad = True  # grad * conj(det A^-T): right for complex matrices

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return get_array_module(a._data).linalg.det(a._data)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        det, = ctx.outputs()
        n = a._data.shape[-1]
        if n == 0:
            return None
        scaled = (cj(grad) * det).unsqueeze(-1).unsqueeze(-2)
        if bool((det._data != 0).all()):
            # (det A^-1)^H: A's own LU, as det's, so their errors cancel when A is nearly
            # singular (A^H's would not)
            return solve(a, scaled * _eye_like(a, n)).mH
        # singular: the adjugate through the SVD, d det / d s_i = prod of the others
        u, s, vh = svd(a, False)
        sign = apply_saving_outputs(Det, u) * apply_saving_outputs(Det, vh)
        return matmul(u * (_prod_others(s) * (grad * cj(sign)).unsqueeze(-1)).unsqueeze(-2),
                      vh)


def _prod_others(s):
    """``prod_{j != i} s_j`` for each i (last dim), without dividing (s may hold zeros)."""
    ones = s[..., :1] * 0 + 1
    left = _cat([ones, s[..., :-1]]).cumprod(-1)
    right = _cat([ones, s.flip(-1)[..., :-1]]).cumprod(-1).flip(-1)
    return left * right


def _cat(tensors):
    return cat(tensors, -1)


class Slogdet(_SavesOutputs):
    """``(sign, log|det A|)``; ``log|det|`` gives ``g A^-H``, a real sign a zero gradient
    (a complex one's phase: complex_linalg.slogdet_coefficient)."""
    _backward_name = "LinalgSlogdetBackward0"
    complex_grad = True  # complex: the sign's phase has a gradient too (complex_linalg)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        sign, logabs = get_array_module(a._data).linalg.slogdet(a._data)
        return sign, logabs

    @staticmethod
    def backward(ctx, g_sign, g_logabs):
        a, = ctx.saved_tensors
        n = a._data.shape[-1]
        if a._data.dtype.kind == "c" and g_sign is not None:  # the sign again, differentiably
            g_logabs = CL.slogdet_coefficient(Slogdet.apply(a)[0], g_sign, g_logabs)
        if n == 0 or g_logabs is None:
            return None
        return solve(a.mH, g_logabs.unsqueeze(-1).unsqueeze(-2) * _eye_like(a, n))


class Solve(_SavesOutputs):
    """``X = A^-1 B`` for matrices ``B`` (batch dims broadcast); backward
    ``gB = A^-H g``, ``gA = -gB X^H``, each summed back to its input's shape.
    ``check=False`` (``solve_ex``, triangular solves): a singular system gives NaN
    instead of an error."""
    _backward_name = "LinalgSolveExBackward0"
    complex_grad = True  # conjugate transposes: right for complex matrices

    @staticmethod
    def forward(ctx, a, b, check=True, name="torch.linalg.solve"):
        ctx.save_for_backward(a)
        ctx.check = check
        xp = get_array_module(a._data)
        try:
            return _solve_arrays(xp, a._data, b._data)
        except np.linalg.LinAlgError:  # (CuPy raises it too: see cupy_backend's linalg)
            shape = np.broadcast_shapes(a._data.shape[:-2], b._data.shape[:-2])
            full = xp.broadcast_to(a._data, shape + a._data.shape[-2:])
            if not check:
                rhs = xp.broadcast_to(b._data, shape + b._data.shape[-2:])
                return _solve_each_or_nan(full, rhs)
            infos = singular_infos(full).reshape(-1)
            k = int(np.flatnonzero(infos)[0]) if infos.any() else 0
            raise _LinAlgError(f"{name}: {batch_prefix(full.shape, k)}The solver failed "
                               "because the input matrix is singular.") from None

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        x, = ctx.outputs()
        gb = solve(a.mH, grad, ctx.check)
        ga = -matmul(gb, x.mH) if ctx.needs_input_grad[0] else None
        if ga is not None:
            ga = ga.sum_to_size(a._data.shape)
        if ctx.needs_input_grad[1]:
            gb = gb.sum_to_size(ctx.b_shape)
        else:
            gb = None
        return ga, gb, None, None


def _solve_arrays(xp, a, b):
    """``xp.linalg.solve`` with NumPy's batch broadcasting (``b`` a vector when 1-d), which
    CuPy's solve lacks: there both operands are broadcast to one batch first."""
    if xp is np:
        return np.linalg.solve(a, b)
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = xp.linalg.solve(xp.broadcast_to(a, shape + a.shape[-2:]),
                        xp.broadcast_to(b, shape + b.shape[-2:]))
    return x[..., 0] if vector else x


def _solve_each_or_nan(a, b):
    xp = get_array_module(a)
    flat_a = a.reshape((-1,) + a.shape[-2:])
    flat_b = b.reshape((-1,) + b.shape[-2:])
    out = xp.full(flat_b.shape, float("nan"), dtype=b.dtype)
    for i in range(flat_a.shape[0]):
        try:
            out[i] = xp.linalg.solve(flat_a[i], flat_b[i])
        except np.linalg.LinAlgError:
            pass
    return out.reshape(b.shape)


def solve(a, b, check=True, name="torch.linalg.solve"):
    """``Solve`` on matrices (no argument checks: for backward formulas)."""
    out = apply_saving_outputs(Solve, a, b, check, name)
    node = out._grad_fn
    if isinstance(node, Solve._backward_cls) and not _under_vmap(out):
        node.b_shape = b._data.shape
    return out


class CholeskySolve(_SavesOutputs):
    """``X = (L L^T)^-1 B`` (``upper``: ``(U^T U)^-1 B``) from a Cholesky factor, reading
    its triangle; batch dims broadcast. Backward (PyTorch's, for a full factor):
    ``gB = (L L^T)^-1 g``, ``gL = -(gB X^T + X gB^T) L`` (``-U (...)`` for upper)."""
    _backward_name = "CholeskySolveBackward0"
    complex_grad = True  # conjugate transposes: right for complex factors

    @staticmethod
    def forward(ctx, b, factor, upper):
        ctx.save_for_backward(factor)
        ctx.upper = upper
        f = factor._data
        xp = get_array_module(f)
        tri = xp.triu(f) if upper else xp.tril(f)
        tri_h = tri.swapaxes(-1, -2).conj()
        first, second = (tri_h, tri) if upper else (tri, tri_h)
        shape = np.broadcast_shapes(f.shape[:-2], b._data.shape[:-2])
        first = xp.broadcast_to(first, shape + f.shape[-2:])
        second = xp.broadcast_to(second, shape + f.shape[-2:])
        rhs = xp.broadcast_to(b._data, shape + b._data.shape[-2:])
        with np.errstate(divide="ignore", invalid="ignore"):
            try:
                return xp.linalg.solve(second, xp.linalg.solve(first, rhs))
            except np.linalg.LinAlgError:  # a zero on the diagonal: LAPACK gives inf/NaN
                return _solve_each_or_nan(second, _solve_each_or_nan(first, rhs))

    @staticmethod
    def backward(ctx, grad):
        factor, = ctx.saved_tensors
        x, = ctx.outputs()
        gb = cholesky_solve(grad, factor, ctx.upper)
        gl = None
        if ctx.needs_input_grad[1]:
            common = matmul(gb, x.mH)
            common = common + common.mH
            gl = -matmul(factor, common) if ctx.upper else -matmul(common, factor)
            gl = gl.sum_to_size(factor._data.shape)
        gb = gb.sum_to_size(ctx.b_shape) if ctx.needs_input_grad[0] else None
        return gb, gl, None


def cholesky_solve(b, factor, upper):
    out = apply_saving_outputs(CholeskySolve, b, factor, upper)
    node = out._grad_fn
    if isinstance(node, CholeskySolve._backward_cls) and not _under_vmap(out):
        node.b_shape = b._data.shape
    return out


# ---- cholesky ------------------------------------------------------------------------------
def not_positive_definite(data, name):
    """PyTorch's error for the first matrix whose Cholesky factorization fails."""
    host = to_host(data)
    flat = _matrices(host)
    for k, m in enumerate(flat):
        for order in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:order, :order])
            except np.linalg.LinAlgError:
                raise _LinAlgError(
                    f"{name}: {batch_prefix(host.shape, k)}The factorization could not be "
                    "completed because the input is not positive-definite (the leading minor of "
                    f"order {order} is not positive-definite).") from None
    raise _LinAlgError(f"{name}: The factorization could not be completed because the input is "
                       "not positive-definite.")


def cholesky_infos(data):
    """potrf's info per matrix: the order of the first failing leading minor, or 0."""
    host = to_host(data)
    flat = _matrices(host)
    infos = []
    for m in flat:
        info = 0
        for order in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:order, :order])
            except np.linalg.LinAlgError:
                info = order
                break
        infos.append(info)
    return np.array(infos, dtype=np.int32).reshape(host.shape[:-2])


class Cholesky(_SavesOutputs):
    """``L`` with ``A = L L^T`` (``upper``: ``U = L^T``), read from A's lower triangle.

    Backward: ``phi = L^T gL`` with its strict upper part dropped and its diagonal
    halved, ``gA = L^-T phi L^-1``, made symmetric."""
    _backward_name = "LinalgCholeskyExBackward0"
    complex_grad = True  # conjugate transposes: right for Hermitian matrices

    @staticmethod
    def forward(ctx, a, upper, name, check):
        d = a._data
        xp = get_array_module(d)
        ctx.upper = upper
        try:
            low = xp.linalg.cholesky(d)
        except np.linalg.LinAlgError:
            if check:
                not_positive_definite(d, name)
            low = _per_matrix_or_nan(xp.linalg.cholesky, d)
        if upper:  # U = L^H
            return (low.conj() if low.dtype.kind == "c" else low).swapaxes(-1, -2).copy()
        return low

    @staticmethod
    def backward(ctx, grad):
        factor, = ctx.outputs()
        low, g = (factor.mH, grad.mH) if ctx.upper else (factor, grad)
        n = low._data.shape[-1]
        xp = get_array_module(low._data)
        dt = low._data.dtype
        mask = xp.tril(xp.ones((n, n), dtype=dt)) - 0.5 * xp.eye(n, dtype=dt)
        phi = matmul(low.mH, g) * Tensor._make(mask)
        low_inv = apply_saving_outputs(Inv, low)
        ga = matmul(low_inv.mH, matmul(phi, low_inv))
        return 0.5 * (ga + ga.mH), None, None, None


# ---- qr ------------------------------------------------------------------------------------
class Qr(_SavesOutputs):
    """``A = QR``. Backward (reduced, m >= n):
    ``gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T`` with ``copyltu(M)`` the symmetric
    matrix of M's lower triangle; for m < n, ``A = Q [X | Y]`` reduces it to the square
    case plus ``gY = Q gR_Y``."""
    _backward_name = "LinalgQrBackward0"
    complex_grad = True  # conjugate transposes: right for complex matrices

    @staticmethod
    def forward(ctx, a, mode):
        d = a._data
        xp = get_array_module(d)
        ctx.mode = mode
        ctx.save_for_backward(a)
        if mode == "r":
            r = xp.linalg.qr(d, mode="r")
            return xp.zeros((0,), dtype=d.dtype), r
        q, r = xp.linalg.qr(d, mode=mode)
        return q, r

    @staticmethod
    def backward(ctx, gq, gr):
        a, = ctx.saved_tensors
        m, n = a._data.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when "
                "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                "differentiate through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        q, r = ctx.outputs()
        gq = _zeros_like(q) if gq is None else gq
        gr = _zeros_like(r) if gr is None else gr
        if m >= n:
            return _qr_backward_tall(q, r, gq, gr), None
        y = a[..., m:]
        gr_y = gr[..., m:]
        gx = _qr_backward_tall(q, r[..., :m], gq + matmul(y, gr_y.mH), gr[..., :m])
        return _cat([gx, matmul(q, gr_y)]), None


def _qr_backward_tall(q, r, gq, gr):
    m_ = matmul(r, gr.mH) - matmul(gq.mH, q)
    low = m_.tril()
    sym = low + low.tril(-1).mH
    if m_._data.dtype.kind == "c":  # the diagonal's real part only: (M + M^H) / 2 there
        sym = sym - 1j * CL.imag_diagonal(m_)
    rhs = gq + matmul(q, sym)
    return solve(r, rhs.mH).mH  # rhs R^-H


# ---- svd, eigh -----------------------------------------------------------------------------
class Svd(_SavesOutputs):
    """``A = U diag(S) Vh``. Backward (on the reduced factors, ``k = min(m, n)``):
    ``gA = U [(skew(U^T gU) S + S skew(Vh gVh^T)) / E + diag(gS)] Vh`` with
    ``E_ij = s_j^2 - s_i^2``, plus the parts of gU (m > n) or gVh (m < n) outside
    the span of U or V."""
    _backward_name = "LinalgSvdBackward0"
    complex_grad = True  # conjugate transposes and the phase term (complex_linalg)

    @staticmethod
    def forward(ctx, a, full_matrices):
        ctx.full = full_matrices
        u, s, vh = get_array_module(a._data).linalg.svd(a._data, full_matrices=full_matrices)
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.outputs()
        m, n = u._data.shape[-2], vh._data.shape[-1]
        k = s._data.shape[-1]
        if ctx.full:  # the columns past k are any basis: only the first k count
            u, vh = u[..., :k], vh[..., :k, :]
            gu = None if gu is None else gu[..., :k]
            gvh = None if gvh is None else gvh[..., :k, :]
        if gu is None and gvh is None:  # singular values only: no division by gaps
            return (None if gs is None else matmul(u * gs.unsqueeze(-2), vh)), None
        gs = _zeros_like(s) if gs is None else gs
        return svd_backward(u, s, vh, gu, gs, gvh, m, n), None


def svd_backward(u, s, vh, gu, gs, gvh, m, n):
    """The SVD's gradient on reduced factors; ``gu`` or ``gvh`` may be None (no terms)."""
    s2 = s * s
    k = s._data.shape[-1]
    eye = _eye_like(s, k)
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye  # 1 on the diagonal (skew parts are 0)
    core = None
    uhgu = vhgv = None
    if gu is not None:
        uhgu = matmul(u.mH, gu)
        core = (uhgu - uhgu.mH) * s.unsqueeze(-2)
    if gvh is not None:
        vhgv = matmul(vh, gvh.mH)
        term = s.unsqueeze(-1) * (vhgv - vhgv.mH)
        core = term if core is None else core + term
    core = core / e + _diag_embed(gs)
    if u._data.dtype.kind == "c":
        core = CL.svd_phase(core, uhgu, vhgv, s)
    if m > n and gu is not None:
        gu_sinv = gu / s.unsqueeze(-2)
        left = matmul(u, core) + gu_sinv - matmul(u, matmul(u.mH, gu_sinv))
        return matmul(left, vh)
    if m < n and gvh is not None:
        sinv_gvh = gvh / s.unsqueeze(-1)
        right = matmul(core, vh) + sinv_gvh - matmul(matmul(sinv_gvh, vh.mH), vh)
        return matmul(u, right)
    return matmul(u, matmul(core, vh))


def svd(a, full_matrices):
    return apply_saving_outputs(Svd, a, full_matrices)


class Eigh(_SavesOutputs):
    """``A = Q diag(L) Q^T`` for symmetric A, read from one triangle (``UPLO``).
    Backward: ``gA = Q [skew-part(Q^T gQ) / E, with diag(gL) on the diagonal] Q^T``,
    ``E_ij = L_j - L_i``."""
    _backward_name = "LinalgEighBackward0"
    complex_grad = True  # conjugate transposes and the phase check (complex_linalg)

    @staticmethod
    def forward(ctx, a, uplo):
        w, v = get_array_module(a._data).linalg.eigh(a._data, UPLO=uplo)
        return w, v

    @staticmethod
    def backward(ctx, gl, gv):
        w, v = ctx.outputs()
        if gv is None:  # eigenvalues only: no division by gaps
            return (None if gl is None else matmul(v * gl.unsqueeze(-2), v.mH)), None
        gl = _zeros_like(w) if gl is None else gl
        n = w._data.shape[-1]
        eye = _eye_like(w, n)
        e = w.unsqueeze(-2) - w.unsqueeze(-1) + eye
        vhgv = matmul(v.mH, gv)
        if v._data.dtype.kind == "c":
            CL.check_eigh_phase(vhgv)
        inner = 0.5 * (vhgv - vhgv.mH) / e
        inner = inner * (1 - eye) + _diag_embed(gl)
        return matmul(v, matmul(inner, v.mH)), None


# ---- pseudo-inverse ------------------------------------------------------------------------
def pinv_array(d, atol, rtol, hermitian):
    """The pseudo-inverse of every matrix of ``d``: singular values at or below
    ``max(atol, rtol * largest)`` are dropped (``atol``/``rtol``: arrays or None)."""
    xp = get_array_module(d)
    if hermitian:
        w, v = xp.linalg.eigh(d)
        s = xp.abs(w)
    else:
        u, s, vh = xp.linalg.svd(d, full_matrices=False)
    cutoff = tolerance_array(d, s, atol, rtol)
    keep = s > cutoff[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if hermitian:
            inv_s = xp.where(keep, 1 / xp.where(keep, w, 1), 0).astype(d.dtype)
            return (v * inv_s[..., None, :]) @ v.swapaxes(-1, -2).conj()
        inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(d.dtype)
    return vh.swapaxes(-1, -2).conj() @ (inv_s[..., :, None] * u.swapaxes(-1, -2).conj())


def tolerance_array(d, s, atol, rtol):
    """``max(atol, rtol * s_max)`` per matrix, with PyTorch's defaults: ``rtol = eps *
    max(m, n)`` when neither is given, 0 when only ``atol`` is."""
    xp = get_array_module(d)
    m, n = d.shape[-2:]
    if rtol is None:
        rtol = np.finfo(d.dtype).eps * max(m, n) if atol is None else 0.0
    smax = s.max(axis=-1) if s.shape[-1] else xp.zeros(s.shape[:-1], d.dtype)
    cut = xp.asarray(rtol) * smax
    if atol is not None:
        cut = xp.maximum(cut, xp.asarray(atol))
    return cut


class Pinv(_SavesOutputs):
    """Moore-Penrose pseudo-inverse; backward is the closed form of its differential
    (exact where the rank does not change)."""
    _backward_name = "LinalgPinvBackward0"
    complex_grad = True  # conjugate transposes: right for complex matrices

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        ctx.save_for_backward(a)
        return pinv_array(a._data, atol, rtol, hermitian)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        p, = ctx.outputs()
        return pinv_backward(grad, p, a), None, None, None


def pinv_backward(g, p, a):
    """d <g, pinv(A)> / dA, for ``p = pinv(A)``."""
    m, n = a._data.shape[-2:]
    ph, gh = p.mH, g.mH
    if m <= n:
        k = matmul(gh, p)
        kph = matmul(k, ph)
        return (-matmul(p, k).mH + kph - matmul(matmul(a, p), kph)
                + matmul(matmul(ph, p), gh - matmul(k, a)))
    k = matmul(p, gh)
    phk = matmul(ph, k)
    return (-matmul(k, p).mH + matmul(matmul(gh - matmul(a, k), p), ph) + phk
            - matmul(matmul(phk, p), a))


def pinv(a, atol=None, rtol=None, hermitian=False):
    return apply_saving_outputs(Pinv, a, atol, rtol, hermitian)


class LstsqSolution(_SavesOutputs):
    """``(solution, residuals)`` of least squares, computed by the caller (the solution is
    the minimum-norm ``pinv(A) B``). Backward: the solution's through ``pinv(A)``; the
    residuals ``|A X - B|^2`` (per column) are stationary in X, so theirs is
    ``2 (A X - B) gR X^T`` for A and ``-2 (A X - B) gR`` for B."""
    _backward_name = "LinalgLstsqBackward0"
    complex_grad = True  # conjugate transposes: right for complex matrices

    @staticmethod
    def forward(ctx, a, b, solution, residuals):
        ctx.save_for_backward(a, b)
        return solution, residuals

    @staticmethod
    def backward(ctx, grad, grad_residuals):
        a, b = ctx.saved_tensors
        ga = gb = None
        if grad is not None:
            p = pinv(a)
            if ctx.needs_input_grad[0]:
                ga = pinv_backward(matmul(grad, b.mH), p, a)
            if ctx.needs_input_grad[1]:
                gb = matmul(p.mH, grad)
        if grad_residuals is not None and grad_residuals._data.size:
            x, _ = ctx.outputs()
            weighted = (matmul(a, x) - b) * grad_residuals.unsqueeze(-2) * 2
            if ctx.needs_input_grad[0]:
                ga = matmul(weighted, x.mH) if ga is None else ga + matmul(weighted, x.mH)
            if ctx.needs_input_grad[1]:
                gb = -weighted if gb is None else gb - weighted
        if ga is not None:
            ga = ga.sum_to_size(a._data.shape)
        if gb is not None:
            gb = gb.sum_to_size(b._data.shape)
        return ga, gb, None, None


__all__ = ["Inv", "Det", "Slogdet", "Solve", "CholeskySolve", "Cholesky", "Qr", "Svd",
           "Eigh", "Pinv", "LstsqSolution", "_LinAlgError"]
