"""Hand-written forward-mode rules (``Primitive.jvp``) for the hot and simple ops.

Every other differentiable op gets its JVP from its backward formula
(``ember.autograd.forward_ad._jvp_from_backward``), which is exact but runs the op
and two backward passes again; the rules here cost about one forward each. A rule is
``jvp(ctx, args, tangents, out)``: ``tangents`` parallels ``args`` (None where an
argument has no tangent), ``ctx`` is what forward filled in, and the rule returns the
output's tangent (broadcast to the output's shape by the caller), or NotImplemented to
leave a case to the rule derived from backward. Rules run with
tangent propagation suspended, on ordinary ember ops, so forward-over-reverse works.
A rule also right for complex tangents (holomorphic or linear ops) is marked
``complex_ok``; forward_ad refuses complex tangents through the others.
"""
from . import (elementwise as E, activation_ops as A, linalg as L, conv as C, reduction as R,
               shape as S, indexing as I, nn_ops as N, decompositions as D, special as SP,
               loss_ops as LO, loss_nodes as LN, trig as TR)
from .._tensor import Tensor
from .complex_ops import cj


def _plus(a, b):
    if a is None:
        return b
    return a if b is None else a + b


def _linear_in_first(cls):
    """Ops linear in their first argument (the others carry no tangent): f(t, rest)."""
    def jvp(ctx, args, tangents, out):
        if any(t is not None for t in tangents[1:]):
            return NotImplemented
        return cls.apply(tangents[0], *args[1:])
    jvp.complex_ok = True
    return staticmethod(jvp)


def _add(ctx, args, tangents, out):
    ta, tb = tangents[0], tangents[1]
    if tb is not None and ctx.alpha != 1:
        tb = tb * ctx.alpha
    return _plus(ta, tb)


def _mul(ctx, args, tangents, out):
    a, b = args
    ta, tb = tangents
    return _plus(None if ta is None else ta * b, None if tb is None else a * tb)


def _div(ctx, args, tangents, out):
    b = args[1]
    if len(args) > 2 and args[2] is not None:  # rounding: piecewise constant
        return out.new_zeros(out._data.shape)
    ta, tb = tangents[0], tangents[1]
    return _plus(None if ta is None else ta / b, None if tb is None else -tb * out / b)


def _neg(ctx, args, tangents, out):
    return -tangents[0]


def _relu(ctx, args, tangents, out):
    return tangents[0] * (out > 0)


def _bilinear(cls):
    """``f(a, b)`` linear in each: ``f(ta, b) + f(a, tb)`` (matmul, mm, bmm)."""
    def jvp(ctx, args, tangents, out):
        a, b = args
        ta, tb = tangents
        return _plus(None if ta is None else cls.apply(ta, b),
                     None if tb is None else cls.apply(a, tb))
    jvp.complex_ok = True
    return staticmethod(jvp)


def _linear(ctx, args, tangents, out):
    x, w = args[0], args[1]
    tx, tw = tangents[0], tangents[1]
    tb = tangents[2] if len(tangents) > 2 else None
    result = None
    if tx is not None:
        result = L.LinearNoBias.apply(tx, w)
    if tw is not None:
        result = _plus(result, L.LinearNoBias.apply(x, tw))
    return _plus(result, tb)


def _conv(ctx, args, tangents, out):
    x, w, geom = args[0], args[1], args[2]
    tx, tw = tangents[0], tangents[1]
    tb = tangents[3] if len(tangents) > 3 else None
    result = None
    if tx is not None:
        result = C.ConvForward.apply(tx, w, geom)
    if tw is not None:
        result = _plus(result, C.ConvForward.apply(x, tw, geom))
    if tb is not None:
        tb = tb.reshape((1, -1) + (1,) * (out._data.ndim - 2))
    return _plus(result, tb)


def _softmax(ctx, args, tangents, out):
    t = tangents[0].to(out.dtype)
    return out * (t - (out * t).sum(ctx.dim, keepdim=True))


def _log_softmax(ctx, args, tangents, out):
    t = tangents[0].to(out.dtype)
    return t - (out.exp() * t).sum(ctx.dim, keepdim=True)


def _cat(ctx, args, tangents, out):
    dim, tensors = args[0], args[1:]
    parts = [t if t is not None else a.new_zeros(a._data.shape)
             for a, t in zip(tensors, tangents[1:])]
    return S.Cat.apply(dim, *parts)


def _pow(ctx, args, tangents, out):
    a, b = args
    ta, tb = tangents
    if isinstance(b, Tensor) or tb is not None:
        return NotImplemented  # a tensor exponent: the rule from backward (zero bases)
    if b == 0:
        return ta * 0
    return ta * (b * a ** (b - 1))


def _where(ctx, args, tangents, out):
    cond, a, b = args
    ta, tb = tangents[1], tangents[2]
    zero = out.new_zeros(())
    return E.Where.apply(cond, zero if ta is None else ta, zero if tb is None else tb)


def _tanh_grad(ctx, args, tangents, out):
    grad, y = args  # grad * (1 - y**2)
    tg, ty = tangents
    return _plus(None if tg is None else tg * (1 - y * y),
                 None if ty is None else ty * (-2 * grad * y))


def _sigmoid_grad(ctx, args, tangents, out):
    grad, y = args  # grad * y * (1 - y)
    tg, ty = tangents
    return _plus(None if tg is None else tg * (y * (1 - y)),
                 None if ty is None else ty * (grad * (1 - 2 * y)))


def _standard_gamma(ctx, args, tangents, out):
    # A random op: the rule derived from backward would draw a new sample.
    return tangents[0] * SP.StandardGammaGrad.apply(args[0], out)


def _elementwise_backward(cls):
    """Single-input elementwise ops whose backward reads only saved inputs and forward's
    attributes: backward applied to the tangent is the JVP (a diagonal Jacobian)."""
    def jvp(ctx, args, tangents, out):
        if any(t is not None for t in tangents[1:]):
            return NotImplemented
        grads = cls.backward(ctx, tangents[0])
        return grads[0] if isinstance(grads, (tuple, list)) else grads
    return staticmethod(jvp)


def _reduce(loss, reduction):
    if reduction == "sum":
        return loss.sum()
    return loss.mean() if reduction == "mean" else loss


def _difference(tx, ty):
    if ty is None:
        return tx
    return -ty if tx is None else tx - ty


def _elementwise_loss(cls):
    """MSE, smooth L1, Huber: ``slope(x - y) * (tx - ty)``, reduced as the loss is."""
    def jvp(ctx, args, tangents, out):
        x, y = args[0], args[1]
        return _reduce(cls.slope(x - y, ctx.param) * _difference(tangents[0], tangents[1]),
                       ctx.reduction)
    return staticmethod(jvp)


def _bce(ctx, args, tangents, out):
    x, t = args[0], args[1]
    tx, tt = tangents[0], tangents[1]
    loss = None
    if tx is not None:
        loss = tx * (x - t) / (x * (1 - x)).clamp_min(1e-12)
    if tt is not None:
        loss = _plus(loss, tt * ((-x).log1p().clamp_min(-100) - x.log().clamp_min(-100)))
    if ctx.weight is not None:
        loss = loss * ctx.weight
    return _reduce(loss, ctx.reduction)


def _bce_with_logits(ctx, args, tangents, out):
    x, t = args[0], args[1]
    tx, tt = tangents[0], tangents[1]
    pw = ctx.pos_weight
    loss = None
    if tx is not None:
        slope = x.sigmoid() - t if pw is None else ((pw - 1) * t + 1) * x.sigmoid() - pw * t
        loss = tx * slope
    if tt is not None:
        slope = -x if pw is None else -(x + (pw - 1) * LO.log_sigmoid(x))
        loss = _plus(loss, tt * slope)
    if ctx.weight is not None:
        loss = loss * ctx.weight
    return _reduce(loss, ctx.reduction)


def _nll(ctx, args, tangents, out):
    picked = Tensor._make(LN.NllLoss._picks(ctx)) * tangents[0]  # -w (/ total) at the targets
    if ctx.reduction == "none":
        return picked.sum(ctx.cdim)
    return picked.sum()


def _unary_from_backward(cls):
    """Elementwise unary ops: the Jacobian is diagonal, so backward's formula with the
    tangent in place of the gradient is the JVP."""
    grad_fn = cls._grad_formula

    def jvp(ctx, args, tangents, out):
        t = tangents[0]
        if t._data.dtype.kind != "c" and args[0]._data.dtype.kind != "c":
            return grad_fn(t, args[0], out)
        # complex: backward is grad * conj(f'(z)), so conj(backward(conj(t))) is f'(z) t
        # (abs, whose result is real: the real part of it)
        result = cj(grad_fn(cj(t), args[0], out))
        return result if out._data.dtype.kind == "c" else result.real
    jvp.complex_ok = True
    return staticmethod(jvp)


def _install():
    for rule in (_add, _mul, _div, _neg, _linear, _cat, _where, _pow, _tanh_grad,
                 _sigmoid_grad):
        rule.complex_ok = True  # holomorphic or linear: the same formula for complex
    for cls in (E.Add, E.Sub):
        cls.jvp = staticmethod(_add)
    E.Mul.jvp = staticmethod(_mul)
    E.Div.jvp = staticmethod(_div)
    E.Neg.jvp = staticmethod(_neg)
    A.Relu.jvp = staticmethod(_relu)
    for cls in (L.Matmul, L.Mm, L.Bmm):
        cls.jvp = _bilinear(cls)
    for cls in (L.Linear, L.LinearNoBias):
        cls.jvp = staticmethod(_linear)
    C.ConvForward.jvp = staticmethod(_conv)
    N.Softmax.jvp = staticmethod(_softmax)
    N.LogSoftmax.jvp = staticmethod(_log_softmax)
    S.Cat.jvp = staticmethod(_cat)
    SP.StandardGamma.jvp = staticmethod(_standard_gamma)
    for cls in (A.Hardtanh, A.LeakyRelu, A.Elu, A.Gelu, A.Silu, A.Softplus, A.Mish,
                LO.LogSigmoid, SP.Lgamma, SP.Digamma):
        cls.jvp = _elementwise_backward(cls)
    for cls in (LN.MseLoss, LN.SmoothL1Loss, LN.HuberLoss):
        cls.jvp = _elementwise_loss(cls)
    LN.BinaryCrossEntropy.jvp = staticmethod(_bce)
    LN.BinaryCrossEntropyWithLogits.jvp = staticmethod(_bce_with_logits)
    LN.NllLoss.jvp = staticmethod(_nll)
    for cls in (R.Sum, R.SumAll, R.Mean, R.MeanAll, R.Cumsum, S.Permute, S.Transpose, S.T,
                S.Expand, S.SumToSize, S.Clone, S.ReshapeCopy, S.Flip, S.Roll, S.Repeat,
                I.AdvancedIndex, I.Gather, I.IndexSelect):
        cls.jvp = _linear_in_first(cls)
    E.Where.jvp = staticmethod(_where)
    E.Pow.jvp = staticmethod(_pow)
    E.TanhGrad.jvp = staticmethod(_tanh_grad)
    E.SigmoidGrad.jvp = staticmethod(_sigmoid_grad)
    for cls in [*vars(E).values(), *vars(TR).values()]:
        if isinstance(cls, type) and getattr(cls, "_grad_formula", None) is not None:
            cls.jvp = _unary_from_backward(cls)
    # Ops that keep their outputs for backward only through apply_saving_outputs:
    # the generic rule reruns them the same way.
    D._SavesOutputs.jvp_rerun = classmethod(D.apply_saving_outputs)
    D.Solve.jvp_rerun = staticmethod(D.solve)  # these also give the node b's shape
    D.CholeskySolve.jvp_rerun = staticmethod(D.cholesky_solve)


_install()

__all__ = []
