"""Complex numbers under autograd: the conjugate, the parts of a complex tensor (views),
building one from its parts, and ``cj`` for backward formulas. An op whose backward is right
for complex tensors says so with ``complex_grad = True`` in its class (see primitive.py).

PyTorch's convention: the gradient a real loss ``L`` sends to a complex ``z = x + iy`` is
``dL/dx + i dL/dy`` (twice the conjugate Wirtinger derivative), so a holomorphic op's
backward is ``grad * conj(f'(z))`` and a real input of a complex result receives the real
part of its gradient (``Primitive._check_grads``).
"""

from ..backend import broadcast_shapes, get_array_module, is_writeable, strided_view
from .._tensor import Tensor
from . import primitive as _primitive
from .primitive import Primitive, unbroadcast


def cj(t):
    """``t`` conjugated when complex (tensor, array or number); real ones as they are."""
    if isinstance(t, Tensor):
        return Conj.apply(t) if t._data.dtype.kind == "c" else t
    if isinstance(t, complex):
        return t.conjugate()
    dtype = getattr(t, "dtype", None)
    return t.conj() if dtype is not None and dtype.kind == "c" else t


class Conj(Primitive):
    """The complex conjugate (a copy: ember has no lazy conjugate bit)."""
    _backward_name = "ConjBackward0"
    complex_grad = True

    @staticmethod
    def forward(ctx, x):
        return get_array_module(x._data).conj(x._data)

    @staticmethod
    def backward(ctx, grad):
        return cj(grad)


class RealPart(Primitive):
    """The real part of a complex tensor, a view; its gradient is real, so the input's is
    that with a zero imaginary part."""
    _backward_name = "RealBackward0"
    is_view = True
    complex_grad = True

    @staticmethod
    def forward(ctx, x):
        ctx.dtype = x._data.dtype
        return x._data.real

    @staticmethod
    def backward(ctx, grad):
        return Complex.apply(grad, grad.new_zeros(()).expand(grad.shape)) \
            if ctx.dtype.kind == "c" else grad


class ImagPart(Primitive):
    """The imaginary part of a complex tensor, a view: ``y`` of ``x + iy`` receives the
    gradient ``i * grad``."""
    _backward_name = "ImagBackward0"
    is_view = True
    complex_grad = True

    @staticmethod
    def forward(ctx, x):
        return x._data.imag

    @staticmethod
    def backward(ctx, grad):
        return Complex.apply(grad.new_zeros(()).expand(grad.shape), grad)


class Complex(Primitive):
    """``real + imag * 1j`` (broadcast; the parts share a real floating dtype)."""
    _backward_name = "ComplexBackward0"
    complex_grad = True

    @staticmethod
    def forward(ctx, real, imag):
        rd, id_ = real._data, imag._data
        ctx.shapes = rd.shape, id_.shape
        xp = get_array_module(rd)
        out = xp.empty(broadcast_shapes(rd.shape, id_.shape),
                       "complex128" if rd.dtype.itemsize == 8 else "complex64")
        out.real, out.imag = rd, id_
        return out

    @staticmethod
    def backward(ctx, grad):
        rs, is_ = ctx.shapes
        gr = unbroadcast(RealPart.apply(grad), rs) if ctx.needs_input_grad[0] else None
        gi = unbroadcast(ImagPart.apply(grad), is_) if ctx.needs_input_grad[1] else None
        return gr, gi


def real_view_array(d):
    """The real view of complex array ``d``: a last dimension of 2 holds (real, imaginary)."""
    parts = d.real  # a view with d's strides, the real part's dtype
    return strided_view(parts, d.shape + (2,), d.strides + (parts.itemsize,),
                        writeable=is_writeable(d))


def complex_view_array(d, complex_dtype):
    """The complex view of real array ``d`` (last dimension 2, stride 1: the caller checks)."""
    return d.view(complex_dtype)[..., 0]


class ViewAsReal(Primitive):
    """A real view of a complex tensor, (real, imaginary) in a last dimension of 2."""
    _backward_name = "ViewAsRealBackward0"
    is_view = True
    complex_grad = True

    @staticmethod
    def forward(ctx, x):
        return real_view_array(x._data)

    @staticmethod
    def backward(ctx, grad):
        d = grad._data
        if d.strides[-1] != d.itemsize or any(s % (2 * d.itemsize) for s in d.strides[:-1]):
            grad = grad.contiguous()
        return ViewAsComplex.apply(grad)


class ViewAsComplex(Primitive):
    """A complex view of a real tensor whose last dimension of 2 (stride 1) holds the parts."""
    _backward_name = "ViewAsComplexBackward0"
    is_view = True
    complex_grad = True

    @staticmethod
    def forward(ctx, x):
        d = x._data
        return complex_view_array(d, "complex128" if d.dtype.itemsize == 8 else "complex64")

    @staticmethod
    def backward(ctx, grad):
        return ViewAsReal.apply(grad)


_primitive.real_part[0] = RealPart.apply
