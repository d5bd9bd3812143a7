"""``ember.ops.aten``: one overload object per built-in op, named as PyTorch's ATen op.

Each of ember's Primitives (``ember._ops``) appears here under the ATen name of the op it
computes (``aten.add.Tensor``, ``aten.mm.default``, ``aten.sum.dim_IntList``, ...) or,
where ATen has no such op, under a name of its own (the class name in snake case:
``aten.sum_to_size.default``, ``aten.basic_index.default``). These are the ``func``
objects a ``TorchDispatchMode`` or a ``__torch_dispatch__`` subclass receives.

An overload is callable: it runs its Primitive on the arguments the handler was given
(the Primitive's own arguments, which follow ATen's schema for most ops but not all:
``_schema`` shows them). A few ops that ATen spells differently are translated both ways:
``aten.cat.default(tensors, dim)``, ``aten.einsum.default(equation, tensors)``,
``aten.pow.Scalar(base, exponent)``, and one Primitive serving two ATen ops
(``max``/``min``, ``amax``/``amin``, ``argmax``/``argmin``, ``var``/``std``,
``all``/``any``, ``tril``/``triu``) shows each under its own name.

>>> import ember
>>> import ember.ops.aten as aten
>>> aten.add.Tensor(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]), alpha=2)
tensor([ 7., 10.])
>>> aten.add.Tensor.name(), aten.add.Tensor.overloadpacket, aten.sin.default.__name__
('aten::add.Tensor', <OpOverloadPacket(op='aten.add')>, 'sin.default')
"""
import inspect
import re
import sys

from ..autograd import dispatch as _dispatch
from .._ops.primitive import Primitive
from .._ops import fft_ops as _fft_ops  # noqa: F401  (ember.fft is lazy: its ops get overloads)
from .._tensor import Tensor

_module = sys.modules[__name__]


_OVERLOAD_ORDER = ("default", "Tensor", "Tensor_Tensor", "Tensor_Scalar", "Scalar", "self",
                   "dim", "dim_IntList", "dims", "int", "out")


class OpOverloadPacket:
    """All the overloads of one op name (``aten.add``): ``aten.add.Tensor`` is one.

    Calling the packet calls its first overload.

    >>> import ember.ops.aten as aten
    >>> aten.pow.overloads()
    ['Tensor_Tensor', 'Tensor_Scalar', 'Scalar']
    """

    def __init__(self, name):
        self.__name__ = name
        self._qualified_op_name = f"aten::{name}"
        self._overload_names = []

    def overloads(self):
        # a fixed order (ATen's for the names ember has), whatever order the Primitives were
        # defined in: "default", then Tensor forms before Scalar forms, then the rest by name
        return sorted(self._overload_names,
                      key=lambda n: (_OVERLOAD_ORDER.index(n) if n in _OVERLOAD_ORDER
                                     else len(_OVERLOAD_ORDER), n))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"The underlying op of 'aten.{self.__name__}' has no overload "
                             f"name '{name}'")

    def __call__(self, *args, **kwargs):
        return getattr(self, self._overload_names[0])(*args, **kwargs)

    def __str__(self):
        return f"aten.{self.__name__}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"


class OpOverload:
    """One op as a dispatch handler sees it (``func``): callable, named as ATen's.

    ``str(func)`` is ``aten.add.Tensor``, ``func.name()`` ``aten::add.Tensor``,
    ``func.overloadpacket`` the packet (``aten.add``); ``func.primitive`` is ember's
    Primitive class behind it.

    >>> import ember, ember.ops.aten as aten
    >>> f = aten.mul.Tensor
    >>> str(f), f.overloadpacket is aten.mul, f(ember.tensor(3.0), 2)
    ('aten.mul.Tensor', True, tensor(6.))
    """

    def __init__(self, packet, overload, primitive, to_primitive=None, flag=()):
        self.overloadpacket = packet
        self._overloadname = overload
        self.primitive = primitive
        self.namespace = "aten"
        self.__name__ = f"{packet.__name__}.{overload}"
        self.__qualname__ = self.__name__
        self._to_primitive = to_primitive  # handler-side arguments -> Primitive's
        self._flag = flag  # trailing Primitive arguments this overload fixes
        self._params = None

    @property
    def op(self):
        return self.primitive.apply

    @property
    def _schema(self):
        """The arguments this overload takes (ember's Primitive arguments, ctx left out)."""
        names = [str(p) for p in self._parameters()]
        return f"aten::{self.__name__}({', '.join(names)})"

    def _parameters(self):
        if self._params is None:
            params = list(inspect.signature(self.primitive.forward).parameters.values())[1:]
            self._params = params[:len(params) - len(self._flag)]
        return self._params

    def name(self):
        return f"aten::{self.__name__}"

    def __call__(self, *args, **kwargs):
        if kwargs:
            bound = inspect.Signature(self._parameters()).bind(*args, **kwargs)
            args = bound.args
        if self._to_primitive is not None:
            args = self._to_primitive(args)
        return self.primitive.apply(*args, *self._flag)

    def __str__(self):
        return f"aten.{self.__name__}"

    def __repr__(self):
        return (f"<OpOverload(op='aten.{self.overloadpacket.__name__}', "
                f"overload='{self._overloadname}')>")


def _packet(name):
    packet = _module.__dict__.get(name)
    if packet is None:
        packet = OpOverloadPacket(name)
        setattr(_module, name, packet)
    return packet


def _overload(name, overload, primitive, to_primitive=None, flag=()):
    packet = _packet(name)
    if overload in packet.__dict__:
        raise AssertionError(f"aten.{name}.{overload} is defined twice")
    ov = OpOverload(packet, overload, primitive, to_primitive, flag)
    setattr(packet, overload, ov)
    packet._overload_names.append(overload)
    return ov


def _is_scalar(x):
    return not isinstance(x, Tensor)


# ---- the table: Primitive class name -> its ATen name --------------------------------------
# "name.overload" for one overload; a (name, {overload: chooser}) pair picks the overload
# from the arguments (``pow``: Tensor_Tensor or Tensor_Scalar).

_ONE = {
    # arithmetic: Python scalars are wrapped into tensors in ATen (``x * 2`` is mul.Tensor)
    "Add": "add.Tensor", "Sub": "sub.Tensor", "Mul": "mul.Tensor",
    "FloorDivide": "floor_divide.default", "Neg": "neg.default",
    "TanhGrad": "tanh_backward.default", "SigmoidGrad": "sigmoid_backward.default",
    "Clamp": "clamp.default", "ClampTensor": "clamp.Tensor",
    "Maximum": "maximum.default", "Minimum": "minimum.default",
    "LogicalAnd": "logical_and.default", "LogicalOr": "logical_or.default",
    "LogicalXor": "logical_xor.default", "LogicalNot": "logical_not.default",
    "BitwiseNot": "bitwise_not.default", "IsNan": "isnan.default", "Where": "where.self",
    "Addcmul": "addcmul.default", "Addcdiv": "addcdiv.default",
    # activations, softmax, losses
    "Relu": "relu.default", "Hardtanh": "hardtanh.default", "LeakyRelu": "leaky_relu.default",
    "Elu": "elu.default", "Gelu": "gelu.default", "Silu": "silu.default",
    "Softplus": "softplus.default", "Mish": "mish.default",
    "LogSigmoid": "log_sigmoid_forward.default",
    "Softmax": "_softmax.default", "LogSoftmax": "_log_softmax.default",
    "MseLoss": "mse_loss.default", "SmoothL1Loss": "smooth_l1_loss.default",
    "HuberLoss": "huber_loss.default", "BinaryCrossEntropy": "binary_cross_entropy.default",
    "BinaryCrossEntropyWithLogits": "binary_cross_entropy_with_logits.default",
    "NllLoss": "nll_loss_forward.default", "NllLoss2d": "nll_loss2d_forward.default",
    # products and matrix functions
    "Matmul": "matmul.default", "Mm": "mm.default", "Bmm": "bmm.default",
    "Linear": "linear.default", "Inv": "linalg_inv.default", "Det": "linalg_det.default",
    "Slogdet": "linalg_slogdet.default", "Solve": "linalg_solve.default",
    "CholeskySolve": "cholesky_solve.default", "Cholesky": "linalg_cholesky.default",
    "Qr": "linalg_qr.default", "Svd": "linalg_svd.default", "Eigh": "linalg_eigh.default",
    "Pinv": "linalg_pinv.default", "Diagonal": "diagonal.default",
    "LuFactor": "linalg_lu_factor_ex.default", "LdlFactor": "linalg_ldl_factor_ex.default",
    "LdlSolve": "linalg_ldl_solve.default", "Eig": "linalg_eig.default",
    "DiagEmbed": "diag_embed.default",
    # shape and views
    "View": "view.default", "Unsqueeze": "unsqueeze.default", "Squeeze": "squeeze.default",
    "SqueezeDim": "squeeze.dim", "SqueezeDims": "squeeze.dims", "ReshapeCopy": "reshape.default",
    "ViewDtype": "view.dtype", "Permute": "permute.default", "Transpose": "transpose.int",
    "T": "t.default", "Expand": "expand.default", "Clone": "clone.default",
    "Flip": "flip.default", "Roll": "roll.default", "Repeat": "repeat.default",
    # reductions
    "Sum": "sum.dim_IntList", "SumAll": "sum.default", "Mean": "mean.dim",
    "MeanAll": "mean.default", "LogSumExp": "logsumexp.default",
    "Norm": "linalg_vector_norm.default", "Cumsum": "cumsum.default",
    "Cumprod": "cumprod.default",
    # indexing
    "SelectIndex": "select.int", "AdvancedIndex": "index.Tensor", "IndexPut": "index_put.default",
    "ScatterReduce": "scatter_reduce.two",
    "IndexReduce": "index_reduce.default",
    "_FillAt": "fill_diagonal_.default",
    "Gather": "gather.default", "ScatterAdd": "scatter_add.default",
    "IndexSelect": "index_select.default", "IndexAdd": "index_add.default",
    "Nonzero": "nonzero.default", "Embedding": "embedding.default",
    # special functions and the rest
    "Lgamma": "lgamma.default", "Digamma": "digamma.default", "Polygamma": "polygamma.default",
    "Erfinv": "erfinv.default", "Igamma": "igamma.default",
    "StandardGamma": "_standard_gamma.default",
    "StandardGammaGrad": "_standard_gamma_grad.default",
    "Atan2": "atan2.default", "Hypot": "hypot.default", "LogAddExp": "logaddexp.default",
    "NanToNum": "nan_to_num.default", "Angle": "angle.default", "Conj": "conj.default",
    "RealPart": "real.default", "ImagPart": "imag.default", "Complex": "complex.default",
    "ViewAsReal": "view_as_real.default", "ViewAsComplex": "view_as_complex.default",
    "ConvForward": "convolution.default", "ToDtype": "_to_copy.default",
    "OnesLike": "ones_like.default", "Detach": "detach.default",
    "Im2Col": "im2col.default", "Col2Im": "col2im.default",
    # elementwise extras, torch.special's functions, samplers (_ops/elementwise_extra.py,
    # special_functions.py, sampling.py)
    "Frac": "frac.default", "Sinc": "sinc.default", "Signbit": "signbit.default",
    "Xlogy": "xlogy.Tensor", "I0": "i0.default", "Gcd": "gcd.default", "Lcm": "lcm.default",
    "LogAddExp2": "logaddexp2.default", "Nextafter": "nextafter.default",
    "Heaviside": "heaviside.default", "Ldexp": "ldexp.Tensor",
    "LeftShift": "bitwise_left_shift.Tensor", "RightShift": "bitwise_right_shift.Tensor",
    "I0e": "special_i0e.default", "I1": "special_i1.default", "I1e": "special_i1e.default",
    "Ndtr": "special_ndtr.default", "Ndtri": "special_ndtri.default",
    "LogNdtr": "special_log_ndtr.default", "Erfc": "erfc.default",
    "Erfcx": "special_erfcx.default", "BesselJ0": "special_bessel_j0.default",
    "BesselJ1": "special_bessel_j1.default", "Entr": "special_entr.default",
    "Xlog1py": "special_xlog1py.default", "Zeta": "special_zeta.default",
    "Igammac": "igammac.default", "Poisson": "poisson.default", "Binomial": "binomial.default",
    "NormalTensorFloat": "normal.Tensor_float", "NormalFloatTensor": "normal.float_Tensor",
    "NormalTensorTensor": "normal.Tensor_Tensor", "ExponentialFill": "exponential.default",
    "GeometricFill": "geometric.default", "CauchyFill": "cauchy.default",
    "LogNormalFill": "log_normal.default",
    "BesselY0": "special_bessel_y0.default", "BesselY1": "special_bessel_y1.default",
    "ModifiedBesselI0": "special_modified_bessel_i0.default",
    "ModifiedBesselI1": "special_modified_bessel_i1.default",
    "ModifiedBesselK0": "special_modified_bessel_k0.default",
    "ModifiedBesselK1": "special_modified_bessel_k1.default",
    "ScaledModifiedBesselK0": "special_scaled_modified_bessel_k0.default",
    "ScaledModifiedBesselK1": "special_scaled_modified_bessel_k1.default",
    "AiryAi": "special_airy_ai.default", "SphericalBesselJ0": "special_spherical_bessel_j0.default",
}

# ATen's name is the class name in lower case (the unary math functions and comparisons).
_LOWER = ("Abs Sign Exp Exp2 Log Log2 Log1p Expm1 Sqrt Rsqrt Reciprocal Sin Cos Tan Tanh Floor "
          "Ceil Trunc Sigmoid Erf Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Deg2Rad Rad2Deg "
          "IsInf IsFinite IsPosInf IsNegInf").split()


def _second_is_scalar(args):
    return _is_scalar(args[1])


# (name, overload when the chooser says yes, overload otherwise, chooser)
_CHOSEN = {
    "Div": ("div", "Tensor_mode", "Tensor", lambda a: len(a) > 2 and a[2] is not None),
    "Pow": ("pow", "Tensor_Scalar", "Tensor_Tensor", _second_is_scalar),
    "Remainder": ("remainder", "Scalar", "Tensor", _second_is_scalar),
    "Round": ("round", "decimals", "default", lambda a: len(a) > 1 and a[1] != 0),
    "Lerp": ("lerp", "Scalar", "Tensor", lambda a: _is_scalar(a[2])),
    "MaskedFill": ("masked_fill", "Scalar", "Tensor", lambda a: _is_scalar(a[2])),
    "Scatter": ("scatter", "value", "src", lambda a: _is_scalar(a[3])),
    "Prod": ("prod", "default", "dim_int", lambda a: len(a) < 2 or a[1] is None),
    "Copysign": ("copysign", "Scalar", "Tensor", _second_is_scalar),
}
for _name in ("Eq", "Ne", "Lt", "Le", "Gt", "Ge"):
    _CHOSEN[_name] = (_name.lower(), "Scalar", "Tensor", _second_is_scalar)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _CHOSEN[_name] = (_name, "Scalar", "Tensor", _second_is_scalar)

# One Primitive, two ATen ops told apart by its last argument: (true's, false's).
_FLAGGED = {
    "ExtremeAll": ("max.default", "min.default"),
    "ExtremeDim": ("max.dim", "min.dim"),
    "Amax": ("amax.default", "amin.default"),
    "ArgExtreme": ("argmax.default", "argmin.default"),
    "Var": ("std.correction", "var.correction"),
    "AllAny": ("all.dims", "any.dims"),
    "Tri": ("tril.default", "triu.default"),
}


def _snake(name):
    """``AvgPool3DT`` -> ``avg_pool_3dt``, ``IndexGrad`` -> ``index_grad``."""
    return re.sub(r"(?<=[a-z])(?=[A-Z0-9])|(?<=[A-Z0-9])(?=[A-Z][a-z])", "_", name).lower()


def _route_one(ov):
    def route(args):
        return ov, args
    return route


def _define(cls):
    """Make the overload(s) of Primitive ``cls`` and return its route."""
    name = cls.__name__
    if name in _ONE or name in _LOWER:
        packet, _, overload = (_ONE.get(name) or f"{name.lower()}.default").partition(".")
        return _route_one(_overload(packet, overload, cls))
    if name in _CHOSEN:
        packet, yes, no, choose = _CHOSEN[name]
        ov_yes, ov_no = _overload(packet, yes, cls), _overload(packet, no, cls)

        def route(args):
            return (ov_yes if choose(args) else ov_no), args
        return route
    if name in _FLAGGED:
        flagged = {}
        for flag, spelled in zip((True, False), _FLAGGED[name]):
            packet, _, overload = spelled.partition(".")
            flagged[flag] = _overload(packet, overload, cls, flag=(flag,))

        def route(args):
            return flagged[bool(args[-1])], args[:-1]
        return route
    special = _SPECIAL.get(name)
    if special is not None:
        return special(cls)
    return _route_one(_overload(_snake(name), "default", cls))


def _define_cat(cls):
    ov = _overload("cat", "default", cls, to_primitive=lambda a: (a[1] if len(a) > 1 else 0,
                                                                 *a[0]))
    return lambda args: (ov, ([*args[1:]], args[0]))


def _define_einsum(cls):
    ov = _overload("einsum", "default", cls, to_primitive=lambda a: (a[0], *a[1]))
    return lambda args: (ov, (args[0], [*args[1:]]))


def _define_rpow(cls):
    # RPow(exponent, base) computes base ** exponent: ATen's pow.Scalar(base, exponent)
    ov = _overload("pow", "Scalar", cls, to_primitive=lambda a: (a[1], a[0]))
    return lambda args: (ov, (args[1], args[0]))


_SPECIAL = {"Cat": _define_cat, "Einsum": _define_einsum, "RPow": _define_rpow}


def _all_primitives():
    found, stack = [], [Primitive]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                stack.append(sub)
    return found


def _fallback(cls):
    """A Primitive defined after this module was imported: named after its class."""
    return _define(cls) if cls not in _dispatch.routes else _dispatch.routes[cls]


def _register_all():
    for cls in _all_primitives():
        if cls.__name__.startswith("_") or cls in _dispatch.routes:
            continue  # a base class of others, never applied itself
        _dispatch.routes[cls] = _define(cls)


_register_all()
_dispatch.fallback_route[0] = _fallback

__all__ = ["OpOverload", "OpOverloadPacket"]
