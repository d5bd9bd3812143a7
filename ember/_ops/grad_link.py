"""Zero-gradient links: a gradient formula's result tied to an input it is flat in.

PyTorch computes the gradient of a piecewise-linear op (relu, leaky_relu, hardtanh, ...) with
its own ``*_backward`` op, whose derivative with respect to the op's input is declared as
zeros. So after ``torch.autograd.grad(..., create_graph=True)`` the second backward reaches
that input (and every leaf before it, e.g. a bias) with a zero gradient instead of none: the
bias's ``.grad`` is a zero tensor, not None, and an optimizer steps it (Adam counts the step).
ember writes those gradients as ``grad * mask``, where the mask is a comparison (no graph);
``link_zero_grad`` adds the missing edge: its result equals the formula's value, and
differentiating it gives the anchor a zero gradient. It records only while the gradient
formula itself is being recorded (``create_graph=True``), so a plain backward pays one flag
test.

>>> import ember, ember.nn.functional as F
>>> b = ember.zeros(2, requires_grad=True)
>>> x = ember.tensor([1.0, -1.0], requires_grad=True)
>>> g, = ember.autograd.grad(F.leaky_relu(x + b, 0.2).sum(), x, create_graph=True)
>>> g.pow(2).sum().backward(); b.grad
tensor([0., 0.])
"""
from ..autograd import grad_mode
from ..backend import get_array_module
from .._tensor import Tensor
from .primitive import Primitive

_state = grad_mode._state


class _ZeroGradLink(Primitive):
    """``value`` unchanged; backward passes ``value``'s gradient on and gives ``anchor``
    zeros (PyTorch's ``self: zeros_like(grad)`` in its derivatives of ``*_backward``)."""
    zero_tangent_from_anchor = False

    @staticmethod
    def forward(ctx, value, anchor):
        ctx.anchor_shape = anchor._data.shape
        ctx.anchor_dtype = anchor._data.dtype
        return value._data  # the formula's fresh result: nothing else holds it

    @staticmethod
    def backward(ctx, grad):
        xp = get_array_module(grad._data)
        return grad, Tensor._make(xp.zeros(ctx.anchor_shape, ctx.anchor_dtype))

    @staticmethod
    def jvp(ctx, args, tangents, out):
        # the identity in ``value``, flat in ``anchor``; PyTorch's threshold_backward (relu's,
        # anchored on relu's saved output) gives zeros when only the anchor has a tangent
        if (tangents[0] is None and tangents[1] is not None
                and ctx._forward_cls.zero_tangent_from_anchor):
            return out.new_zeros(out.shape)
        return tangents[0]
    jvp.complex_ok = True


def _link_class(backward_name, zero_tangent_from_anchor=False):
    """A link op whose graph node carries PyTorch's name for the gradient formula's node
    (``LeakyReluBackwardBackward0``: what ``g.grad_fn`` shows there)."""
    return type(backward_name.replace("Backward0", "Link"), (_ZeroGradLink,),
                {"_backward_name": backward_name, "__module__": __name__,
                 "zero_tangent_from_anchor": zero_tangent_from_anchor})


THRESHOLD_BACKWARD = _link_class("ThresholdBackwardBackward0", zero_tangent_from_anchor=True)
LEAKY_RELU_BACKWARD = _link_class("LeakyReluBackwardBackward0")
HARDTANH_BACKWARD = _link_class("HardtanhBackwardBackward0")
#: every link op (vmap's batching rule covers them all); ``link_class`` adds to it
LINKS = [THRESHOLD_BACKWARD, LEAKY_RELU_BACKWARD, HARDTANH_BACKWARD]
_BY_NAME = {cls._backward_name: cls for cls in LINKS}


def link_class(backward_name):
    """The link op named ``backward_name`` (made once)."""
    cls = _BY_NAME.get(backward_name)
    if cls is None:
        cls = _BY_NAME[backward_name] = _link_class(backward_name)
        LINKS.append(cls)
    return cls


def link_zero_grad(value, anchor, link=THRESHOLD_BACKWARD):
    """``value``, tied to ``anchor`` by a zero gradient while a graph is recorded (else
    ``value`` itself: the plain backward is untouched)."""
    if not _state.enabled or not anchor.requires_grad:
        return value
    return link.apply(value, anchor)


def link_zero_grad_to_input(value, node, link):
    """``link_zero_grad`` for an op that saves no input (max pooling): the anchor stands on
    ``node``'s edge to its first input, whose gradient ``value`` is; its data (zeros, no
    memory) only gives the shape and dtype."""
    if not _state.enabled:
        return value
    fn, output_nr = node.next_functions[0]
    if fn is None:
        return value
    data = value._data
    xp = get_array_module(data)
    anchor = Tensor._make(xp.broadcast_to(xp.zeros((), data.dtype), data.shape), True)
    anchor._grad_fn, anchor._output_nr = fn, output_nr
    return link.apply(value, anchor)
