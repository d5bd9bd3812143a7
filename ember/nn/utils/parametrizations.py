"""``nn.utils.parametrizations``: ``orthogonal``, ``weight_norm`` and ``spectral_norm``
as parametrizations (``nn.utils.parametrize``), PyTorch's current forms of the three.

>>> import ember
>>> from ember import nn
>>> from ember.nn.utils.parametrizations import orthogonal
>>> layer = orthogonal(nn.Linear(3, 3))
>>> Q = layer.weight
>>> ember.allclose(Q.T @ Q, ember.eye(3), atol=1e-5)
True
"""
from __future__ import annotations

import enum
from typing import Optional

from ... import _creation, _functions as _fn, linalg
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...backend.dtypes import finfo
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .spectral_norm import default_dim
from .weight_norm import norm_except_dim, weight_norm_value

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = _creation.eye(k, dtype=Q.dtype)
    return _fn.allclose(Q.mH @ Q, eye, atol=10.0 * n * finfo(Q.dtype).eps)


def _orthogonal_factor(A):
    """The Q of A's QR decomposition (A tall), with columns signed so that R's diagonal is
    positive (the QR that is unique)."""
    X, tau = _fn.geqrf(A)
    Q = linalg.householder_product(X, tau)
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


class _Orthogonal(Module):
    """Maps an unconstrained matrix to an orthogonal one (unitary when complex): the
    exponential or Cayley transform of the skew part of its lower triangle, or the product
    of the Householder reflectors stored below its diagonal. With a ``base`` (the
    trivialization), the result is ``base @ map(X)``, so that ``X = -I`` gives ``base``."""

    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            Q = self._from_skew(X, n, k)
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # the diagonal's integer part picks each column's sign (-1 for the -I that
            # right_inverse stores)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def _from_skew(self, X, n, k):
        X = X.tril()
        if n != k:
            X = _fn.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
        A = X - X.mH
        if self.orthogonal_map == _OrthMaps.matrix_exp:
            Q = linalg.matrix_exp(A)
        else:
            eye = _creation.eye(n, dtype=A.dtype)
            Q = linalg.solve(_fn.add(eye, A, alpha=-0.5), _fn.add(eye, A, alpha=0.5))
        return Q[..., :k] if n != k else Q

    @no_grad()
    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # the reflectors of Q's QR, with the diagonal's signs standing for R's
            A, tau = _fn.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _orthogonal_factor(Q)
        else:
            # complete the columns to a square orthogonal matrix
            extra = _creation.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _orthogonal_factor(_fn.cat([Q, extra], dim=-1))
        self.base = Q
        neg_eye = _creation.zeros_like(Q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module: Module, name: str = "weight", orthogonal_map: Optional[str] = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` (a matrix or a batch of them) as orthogonal (unitary
    when complex): ``Q^H Q = I`` for a tall matrix, ``Q Q^H = I`` for a wide one.

    ``orthogonal_map``: "matrix_exp" (the default for square or complex matrices),
    "cayley", or "householder" (the default otherwise). ``use_trivialization=True`` keeps a
    ``base`` buffer so that assigning an orthogonal matrix stores it exactly and the
    optimizer moves around it; the initial weight becomes the Q of its QR decomposition.

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils.parametrizations import orthogonal
    >>> layer = orthogonal(nn.Linear(4, 2), orthogonal_map="householder")
    >>> W = layer.weight  # 2 x 4: orthonormal rows
    >>> ember.allclose(W @ W.T, ember.eye(2), atol=1e-5)
    True
    >>> type(layer.parametrizations.weight[0]).__name__
    '_Orthogonal'
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """``(g, v) -> g * v / ||v||``, originals ``g`` (the norms) and ``v`` (the directions)."""

    def __init__(self, dim: Optional[int] = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: Optional[int] = 0) -> Module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||``: the magnitude ``g``
    (``parametrizations.<name>.original0``) learnt apart from the direction ``v``
    (``original1``); the norm is over every dim but ``dim`` (``None``: the whole tensor).
    A state_dict saved with the old ``nn.utils.weight_norm`` (``<name>_g``/``<name>_v``
    keys) still loads.

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils.parametrizations import weight_norm
    >>> layer = weight_norm(nn.Linear(3, 2))
    >>> sorted(layer.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    >>> layer.parametrizations.weight.original0.shape
    ember.Size([2, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def rename_old_keys(state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            g, v = state_dict.pop(g_key), state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = g
            state_dict[f"{prefix}parametrizations.{name}.original1"] = v

    module._register_load_state_dict_pre_hook(rename_old_keys)
    return module


class _SpectralNorm(Module):
    """``W / sigma(W)``, ``sigma`` the largest singular value of W seen as a matrix (dim
    ``dim`` first), estimated by power iteration on the buffers ``_u``, ``_v`` (one step of
    it per forward in training mode, none in eval mode). A vector is just normalized."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from a good estimate
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got "
                                 f"{weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # the buffers are updated in place (out=), so a cached() or DataParallel reader sees
        # the same tensors
        for _ in range(n_power_iterations):
            self._u = F.normalize(_fn.mv(weight_mat, self._v), dim=0, eps=self.eps,
                                  out=self._u)
            self._v = F.normalize(_fn.mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                                  out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # copies: the next power iteration must not change what backward reads
        u, v = self._u.clone(), self._v.clone()
        sigma = _fn.vdot(u, _fn.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: Optional[int] = None) -> Module:
    """Parametrize ``module.<name>`` as ``W / sigma(W)``, its largest singular value
    estimated by power iteration (``n_power_iterations`` steps per forward in training
    mode; the buffers ``parametrizations.<name>.0._u`` / ``_v`` carry the estimate, and
    eval mode reuses it). ``dim``: the output dim (1 for ConvTranspose, else 0).

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils.parametrizations import spectral_norm
    >>> layer = spectral_norm(nn.Linear(4, 3))
    >>> sorted(layer.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v',
     'parametrizations.weight.original']
    >>> bool(ember.linalg.matrix_norm(layer.weight.detach(), 2) < 1.01)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = default_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
