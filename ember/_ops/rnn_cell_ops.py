"""One LSTM or GRU step after its two products, as one op (PyTorch's fused cells,
``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``).

The layers of ember/nn/modules/rnn.py that run step by step (packed sequences, GRU, and
whatever the fused LSTM layer op does not take) would otherwise record ~15 small ops per
step (four or six chunk views, the activations, the products and sums), each a node and a
few NumPy calls: on the small batches of a recurrent model that bookkeeping, not the
arithmetic, is the time. Here the element-wise part of a step is one node: forward on
arrays, ``backward_arrays`` on arrays (the chain rule of the same formulas). The tensor
backward (``create_graph=True``, ``__torch_dispatch__``) recomputes the step with the
composite ops under grad mode and differentiates that, so higher derivatives hold.
"""
from ..autograd.backprop import plain_grad
from ..autograd.grad_mode import enable_grad, _state as _grad_state
from ..backend import get_array_module, kernels
from .._tensor import Tensor
from .activation_ops import sigmoid_array
from .primitive import Primitive
from .rnn_ops import _LSTMLayerNode

__all__ = ["FusedLSTMCell", "FusedGRUCell", "lstm_cell_composite", "gru_cell_composite"]

_make = Tensor._make


def lstm_cell_composite(xi, gh, c):
    """The LSTM step as ember ops: ``gh`` the hidden product (``h W_hh^T + b_hh``), ``xi``
    the input's; returns ``(h, c)``. Gates i, f, g, o in PyTorch's order.

    >>> import ember
    >>> h, c = lstm_cell_composite(ember.zeros(1, 4), ember.zeros(1, 4), ember.ones(1, 1))
    >>> c  # sigmoid(0) * 1 + sigmoid(0) * tanh(0)
    tensor([[0.5000]])
    """
    i, f, g, o = (gh + xi).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell_composite(xi, gh, h):
    """The GRU step as ember ops: ``xi``/``gh`` the input and hidden products (r, z, n
    gates, biases included); returns the new ``h``.

    >>> import ember
    >>> gru_cell_composite(ember.zeros(1, 3), ember.zeros(1, 3), ember.ones(1, 1))
    tensor([[0.5000]])
    """
    i_r, i_z, i_n = xi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + h_n * r).tanh()
    return (h - n) * z + n


def _composite_grads(ctx, composite, grad_outputs):
    """The tensor backward: recompute ``composite`` on the saved inputs under grad mode and
    differentiate it (``create_graph`` when the engine runs in grad mode)."""
    inputs = ctx.saved_tensors[:3]
    wanted = [k for k, need in enumerate(ctx.needs_input_grad) if need]
    with enable_grad():
        outs = composite(*inputs)
    if isinstance(outs, Tensor):
        outs = (outs,)
    found = plain_grad(outs, [inputs[k] for k in wanted], grad_outputs,
                       create_graph=_grad_state.enabled, allow_unused=True)
    grads = [None] * 3
    for k, g in zip(wanted, found):
        grads[k] = g if g is not None else inputs[k].new_zeros(inputs[k].shape)
    return tuple(grads)


class FusedLSTMCell(Primitive):
    """``forward(xi, gh, c)``: (B, 4H), (B, 4H), (B, H) of one dtype; returns ``(h, c)``.

    >>> import ember
    >>> h, c = FusedLSTMCell.apply(ember.zeros(1, 4), ember.zeros(1, 4), ember.ones(1, 1))
    >>> h  # sigmoid(0) * tanh(sigmoid(0) * 1 + sigmoid(0) * tanh(0))
    tensor([[0.2311]])
    """
    _backward_name = "ThnnFusedLstmCellBackward0"
    _node_base = _LSTMLayerNode  # several outputs, arrays in and out

    @staticmethod
    def forward(ctx, xi, gh, c):
        gates = gh._data + xi._data
        xp = get_array_module(gates)
        c_prev = c._data
        hidden = c_prev.shape[-1]
        if kernels.lstm_native_for(gates, c_prev := xp.ascontiguousarray(c_prev)):
            cell, tanh_cell, h = xp.empty_like(c_prev), xp.empty_like(c_prev), \
                xp.empty_like(c_prev)
            kernels.lstm_cell_forward(gates, c_prev, cell, tanh_cell, h)
        else:  # the composite's operations in its order: the same bits
            g_act = xp.tanh(gates[:, 2 * hidden:3 * hidden])
            gates = sigmoid_array(gates)
            gates[:, 2 * hidden:3 * hidden] = g_act
            i, f, o = gates[:, :hidden], gates[:, hidden:2 * hidden], gates[:, 3 * hidden:]
            cell = f * c_prev + i * g_act
            tanh_cell = xp.tanh(cell)
            h = o * tanh_cell
        ctx.save_for_backward(xi, gh, c, _make(gates), _make(tanh_cell))
        return h, cell

    @staticmethod
    def backward_arrays(ctx, grad_h, grad_c):
        _, _, c_prev, gates, tanh_cell = ctx.saved_arrays
        xp = get_array_module(gates)
        dh = xp.zeros_like(tanh_cell) if grad_h is None else xp.ascontiguousarray(grad_h)
        dc = xp.zeros_like(tanh_cell) if grad_c is None else xp.array(grad_c, order="C")
        c_prev = xp.ascontiguousarray(c_prev)
        dgates = xp.empty_like(gates)
        if kernels.lstm_native_for(gates, c_prev, tanh_cell, dh, dc, forward=False):
            kernels.lstm_cell_backward(gates, c_prev, tanh_cell, None, dh, dc, dgates)
        else:  # the fused layer's formulas (rnn_ops._recurrence_grads)
            hidden = dc.shape[-1]
            i, f = gates[:, :hidden], gates[:, hidden:2 * hidden]
            g, o = gates[:, 2 * hidden:3 * hidden], gates[:, 3 * hidden:]
            dgates[:, 3 * hidden:] = dh * (tanh_cell * o * (1 - o))
            dc += dh * (o * (1 - tanh_cell * tanh_cell))
            dgates[:, :hidden] = dc * ((g * i) * (1 - i))
            dgates[:, hidden:2 * hidden] = dc * ((c_prev * f) * (1 - f))
            dgates[:, 2 * hidden:3 * hidden] = dc * (i * (1 - g * g))
            dc *= f
        needs = ctx.needs_input_grad
        return (dgates if needs[0] else None,
                (dgates.copy() if needs[0] else dgates) if needs[1] else None,
                dc if needs[2] else None)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        return _composite_grads(ctx, lstm_cell_composite, (grad_h, grad_c))


class FusedGRUCell(Primitive):
    """``forward(xi, gh, h)``: (B, 3H), (B, 3H), (B, H) of one dtype; returns the new h.

    >>> import ember
    >>> FusedGRUCell.apply(ember.zeros(1, 3), ember.zeros(1, 3), ember.ones(1, 1))
    tensor([[0.5000]])
    """
    _backward_name = "ThnnFusedGruCellBackward0"

    @staticmethod
    def forward(ctx, xi, gh, h):
        x, hh, hd = xi._data, gh._data, h._data
        xp = get_array_module(x)
        hidden = hd.shape[-1]
        r = sigmoid_array(x[:, :hidden] + hh[:, :hidden])
        z = sigmoid_array(x[:, hidden:2 * hidden] + hh[:, hidden:2 * hidden])
        h_n = hh[:, 2 * hidden:]
        n = xp.tanh(x[:, 2 * hidden:] + h_n * r)
        out = (hd - n) * z + n
        ctx.save_for_backward(xi, gh, h, _make(r), _make(z), _make(n))
        return out

    @staticmethod
    def backward_arrays(ctx, grad):
        _, gh, h, r, z, n = ctx.saved_arrays
        xp = get_array_module(grad)
        hidden = h.shape[-1]
        h_n = gh[:, 2 * hidden:]
        needs = ctx.needs_input_grad
        dxi = xp.empty(grad.shape[:-1] + (3 * hidden,), dtype=grad.dtype)
        dn = grad * (1 - z)
        dxi[:, 2 * hidden:] = dn * (1 - n * n)
        dxi[:, hidden:2 * hidden] = (grad * (h - n)) * (z * (1 - z))
        dxi[:, :hidden] = (dxi[:, 2 * hidden:] * h_n) * (r * (1 - r))
        dgh = None
        if needs[1]:
            dgh = dxi.copy()
            dgh[:, 2 * hidden:] *= r
        return (dxi if needs[0] else None, dgh, grad * z if needs[2] else None)

    @staticmethod
    def backward(ctx, grad):
        return _composite_grads(ctx, gru_cell_composite, (grad,))
