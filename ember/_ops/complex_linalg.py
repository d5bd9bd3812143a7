"""The parts of the decompositions' gradients that only complex matrices have
(``decompositions.py`` calls them when its tensors are complex).

A complex determinant's sign is a phase whose gradient is not zero, and complex singular
and eigenvectors are defined up to a phase ``e^{i phi}`` each: a loss that depends on
those phases has no gradient, which PyTorch detects from the imaginary parts of the
diagonals of ``U^H gU`` and ``V^H gV`` (with a lax tolerance, 1e-2) and reports as an
error. Where the loss does not depend on them, the SVD's gradient gets a term for the
phases of ``U`` (``i Im(diag(U^H gU)) / S`` on the diagonal of ``U^H gA V``).
"""
import numpy as np  # dtype metadata only (finfo)

from ..backend import get_array_module
from ..backend.meta import is_meta

_TOLERANCE = 1e-2

_SVD_PHASE = ("svd_backward: The singular vectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this "
              "phase term, making it ill-defined.")
_EIGH_PHASE = ("linalg_eigh_backward: The eigenvectors in the complex case are specified up "
               "to multiplication by e^{i phi}. The specified loss function depends on this "
               "quantity, so it is ill-defined.")


def _imag_diagonal(m):
    return m.diagonal(0, -2, -1).imag


def _close(a, b):
    """``allclose(a, b)`` on the arrays (rtol = atol = 1e-2); meta arrays pass."""
    if is_meta(a):
        return True
    return bool(get_array_module(a).allclose(a, b, rtol=_TOLERANCE, atol=_TOLERANCE))


def slogdet_coefficient(sign, g_sign, g_logabs):
    """``z`` with ``d loss = Re(conj(z) tr(A^-1 dA))``: ``log|det|`` moves with the real
    part of ``tr(A^-1 dA)`` and the sign's phase with its imaginary part, so
    ``z = g_logabs - i Im(conj(g_sign) sign)`` (the gradient is then ``z A^-H``)."""
    if g_sign is None:
        return g_logabs
    phase = (g_sign.conj() * sign).imag * -1j
    return phase if g_logabs is None else phase + g_logabs


def svd_phase(core, uhgu, vhgv, s):
    """``U^H gA V`` of a complex SVD (``core``) with its diagonal's imaginary part
    replaced by the phase term; raises PyTorch's error when the loss depends on the
    singular vectors' phases."""
    im_u = None if uhgu is None else _imag_diagonal(uhgu)
    im_v = None if vhgv is None else _imag_diagonal(vhgv)
    first = im_u if im_u is not None else im_v * 0
    second = -im_v if im_v is not None else im_u * 0
    if not _close(first._data, second._data):
        raise RuntimeError(_SVD_PHASE)
    core = core - 1j * _imag_diagonal(core).diag_embed()
    if im_u is not None:
        # a zero singular value ties no phases together (u s v^H is 0 whatever they are):
        # no term there, rather than rounding noise divided by s
        tiny = s <= s.amax(-1, keepdim=True) * (_eps(s) * max(core.shape[-2:]))
        phase = (im_u / s.masked_fill(tiny, 1)).masked_fill(tiny, 0)
        core = core + 1j * phase.diag_embed()
    return core


def _eps(s):
    return float(np.finfo(s._data.dtype).eps)


def check_eigh_phase(vhgv):
    """PyTorch's error when a loss depends on the eigenvectors' phases (``V^H gV`` with
    an imaginary diagonal)."""
    im = _imag_diagonal(vhgv)._data
    if not _close(im, im * 0):
        raise RuntimeError(_EIGH_PHASE)


def imag_diagonal(m):
    """``Im(diag(m))`` as a diagonal matrix (for QR's gradient: R's diagonal is real)."""
    return _imag_diagonal(m).diag_embed()
