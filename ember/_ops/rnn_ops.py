"""A whole LSTM layer direction as one op: ``LSTMLayer`` (PyTorch's MkldnnRnnLayer node).

``nn.LSTM`` runs each layer and direction of a dense sequence through it instead of one
~10-op composite cell per time step (ember/nn/modules/rnn.py says which calls take it).
Forward projects every step's input at once (one ``x @ W_ih^T``), then runs the recurrence
on arrays, keeping the activated gates, the cells and their tanh. The array backward is
backpropagation through time on arrays: per step one ``dG @ W_hh`` and a few elementwise
ops (in NumPy, the coefficients that do not depend on the recurrence are computed for all
steps at once), then one product each for ``dX``, ``dW_ih`` and ``dW_hh`` over all steps.
Each step's element-wise part runs as one compiled call where ``ember.backend.kernels``
takes the arrays (the forward's float32 only: its sigmoid and tanh are vector ones, within a
few ulp of NumPy's; the backward's is NumPy's arithmetic, the same bits). The tensor
backward (``create_graph=True``, ``__torch_dispatch__``) recomputes the layer with the
composite cell under grad mode and differentiates that, so higher derivatives hold.
"""
from ..autograd.backprop import plain_grad
from ..autograd.dispatch import active as _dispatch_active
from ..autograd.grad_mode import enable_grad, _state as _grad_state
from ..backend import get_array_module, kernels
from ..backend.gemm import matmul as _gemm, matmul_pair as _gemm_pair
from .._tensor import Tensor
from .primitive import Primitive, PrimitiveNode
from .shape import stack

__all__ = ["LSTMLayer", "lstm_layer", "lstm_cell"]

_make = Tensor._make


def lstm_cell(xi, h, c, w_hh, b_hh=None):
    """One LSTM step on tensors, ``xi`` the step's projected input (``x W_ih^T + b_ih``):
    the new ``(h, c)``; gates i, f, g, o in PyTorch's order.

    >>> import ember
    >>> h, c = lstm_cell(ember.zeros(2, 8), ember.zeros(2, 2), ember.ones(2, 2),
    ...                  ember.zeros(8, 2))
    >>> c  # sigmoid(0) * 1 + sigmoid(0) * tanh(0)
    tensor([[0.5000, 0.5000],
            [0.5000, 0.5000]])
    """
    gates = h.matmul(w_hh.t())
    if b_hh is not None:
        gates = gates + b_hh
    i, f, g, o = (gates + xi).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _sigmoid_(xp, a):
    """``a = 1 / (1 + exp(-a))`` in place (the caller silences exp's overflow warning: an
    inf there gives the right 0)."""
    xp.negative(a, out=a)
    xp.exp(a, out=a)
    a += 1
    xp.reciprocal(a, out=a)


def _forward_steps(xp, gates, w_hh, h, c, hs, cells, tanh_cells, reverse):
    """The recurrence: ``gates`` (T, B, 4H) holds each step's input projection and becomes
    its activated gates i, f, g, o; each step's h, c and tanh(c) are written to ``hs``,
    ``cells`` and ``tanh_cells``. Returns the last (h, c)."""
    hidden = hs.shape[2]
    w_t = w_hh.T
    order = range(len(hs) - 1, -1, -1) if reverse else range(len(hs))
    if kernels.lstm_native_for(gates, hs, cells, tanh_cells) and \
            kernels.lstm_native_for(gates, c := xp.ascontiguousarray(c)):
        for t in order:  # the element-wise part of each step in one compiled call
            gate = gates[t]
            gate += _gemm(h, w_t)
            kernels.lstm_cell_forward(gate, c, cells[t], tanh_cells[t], hs[t])
            h, c = hs[t], cells[t]
        return h, c
    g_cols = slice(2 * hidden, 3 * hidden)
    g_act = xp.empty(hs.shape[1:], dtype=hs.dtype)
    i_times_g = xp.empty_like(g_act)
    for t in order:
        gate = gates[t]
        gate += _gemm(h, w_t)
        xp.tanh(gate[:, g_cols], out=g_act)
        _sigmoid_(xp, gate)  # one pass over all four gates; g is put back below
        gate[:, g_cols] = g_act
        i, f, o = gate[:, :hidden], gate[:, hidden:2 * hidden], gate[:, 3 * hidden:]
        cell = cells[t]
        xp.multiply(f, c, out=cell)
        xp.multiply(i, g_act, out=i_times_g)
        cell += i_times_g
        xp.tanh(cell, out=tanh_cells[t])
        xp.multiply(o, tanh_cells[t], out=hs[t])
        h, c = hs[t], cell
    return h, c


class _LSTMLayerNode(PrimitiveNode):
    """The op's node: with no graph to record, the three output gradients (None where an
    output got none) go to ``backward_arrays`` as arrays; otherwise to ``backward`` as
    tensors, missing ones as zeros (the generic path of several outputs)."""

    def _apply(self, grad_outputs, create_graph=False):
        if create_graph or _dispatch_active[0]:
            return PrimitiveNode._apply(self, grad_outputs, create_graph)
        if all(g is None for g in grad_outputs):
            return [None] * len(self.next_functions)
        arrays = [g._data if isinstance(g, Tensor) else g for g in grad_outputs]
        cls = self._forward_cls
        grads = cls.backward_arrays(self, *arrays)
        if self._plain_grads:
            return list(grads)
        return cls._check_grads(self, [None if g is None else _make(g) for g in grads])


class LSTMLayer(Primitive):
    """One LSTM layer in one direction over a dense sequence.

    ``forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)``: ``x`` (T, B, I) time-major,
    ``h0``/``c0`` (B, H), biases may be None. Returns every step's ``h`` (T, B, H, in time
    order whatever the direction), the last ``h`` and the last ``c`` (B, H).

    >>> import ember
    >>> x, h0 = ember.randn(3, 1, 2), ember.zeros(1, 2)
    >>> hs, h, c = LSTMLayer.apply(x, h0, h0, ember.randn(8, 2), ember.randn(8, 2), None, None,
    ...                            True)
    >>> bool((hs[0] == h).all())  # reverse: the last step processed is time 0
    True
    """
    _backward_name = "MkldnnRnnLayerBackward0"
    _node_base = _LSTMLayerNode
    saves_output = True  # the steps' h: the h_{t-1} of dW_hh; guarded against in-place use

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
        xd, wih, whh = x._data, w_ih._data, w_hh._data
        xp = get_array_module(xd)
        steps, batch, _ = xd.shape
        hidden = whh.shape[1]
        gates = _gemm(xd.reshape(steps * batch, -1), wih.T)
        if b_ih is not None:
            gates += b_ih._data + b_hh._data
        gates = gates.reshape(steps, batch, 4 * hidden)
        hs = xp.empty((steps, batch, hidden), dtype=xd.dtype)
        cells = xp.empty_like(hs)
        tanh_cells = xp.empty_like(hs)
        errstate = getattr(xp, "errstate", None)
        if errstate is None:
            h, c = _forward_steps(xp, gates, whh, h0._data, c0._data, hs, cells, tanh_cells,
                                  reverse)
        else:
            with errstate(over="ignore"):  # exp(-x) = inf in a sigmoid gives the right 0
                h, c = _forward_steps(xp, gates, whh, h0._data, c0._data, hs, cells,
                                      tanh_cells, reverse)
        # the activations kept for the array backward are saved tensors too: freed with the
        # graph, and seen by saved-tensor hooks (checkpointing, offloading)
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, _make(gates), _make(cells),
                              _make(tanh_cells))
        ctx.reverse = reverse
        return hs, h.copy(), c.copy()

    @staticmethod
    def backward_arrays(ctx, grad_hs, grad_h, grad_c):
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, gates, cells, tanh_cells, hs = ctx.saved_arrays
        needs = ctx.needs_input_grad
        reverse = ctx.reverse
        xp = get_array_module(x)
        steps, batch, hidden = hs.shape
        h_prev, c_prev = _previous(xp, hs, h0, reverse), _previous(xp, cells, c0, reverse)
        dgates, carry_h, carry_c = _recurrence_grads(
            xp, gates, c_prev, tanh_cells, w_hh, grad_hs, grad_h, grad_c, reverse,
            wants_h0=needs[1])
        flat = dgates.reshape(steps * batch, 4 * hidden)
        grads = [None] * 8
        x_flat = x.reshape(steps * batch, -1)
        if needs[0] and needs[3]:
            gx, grads[3] = _gemm_pair(flat, w_ih, flat.T, x_flat)
        elif needs[0]:
            gx = _gemm(flat, w_ih)
        elif needs[3]:
            grads[3] = _gemm(flat.T, x_flat)
        if needs[0]:
            grads[0] = gx.reshape(x.shape)
        if needs[4]:
            grads[4] = _gemm(flat.T, h_prev.reshape(steps * batch, hidden))
        if b_ih is not None and (needs[5] or needs[6]):
            bias = flat.sum(0)
            grads[5] = bias if needs[5] else None
            if needs[6]:
                grads[6] = bias.copy() if needs[5] else bias  # two leaves, two arrays
        grads[1] = carry_h if needs[1] else None
        grads[2] = carry_c if needs[2] else None
        return tuple(grads)

    @staticmethod
    def backward(ctx, grad_hs, grad_h, grad_c):
        """Recompute the layer with the composite cell and differentiate it: the gradients
        are then themselves differentiable (``create_graph=True``)."""
        inputs = ctx.saved_tensors[:7]
        reverse = ctx.reverse
        create = _grad_state.enabled  # the engine turns grad mode on for create_graph
        wanted = [k for k, (t, need) in enumerate(zip(inputs, ctx.needs_input_grad))
                  if need and t is not None]
        with enable_grad():
            hs, h, c = _composite(*inputs, reverse)
        found = plain_grad((hs, h, c), [inputs[k] for k in wanted], (grad_hs, grad_h, grad_c),
                           create_graph=create, allow_unused=True)
        grads = [None] * 8
        for k, g in zip(wanted, found):
            grads[k] = g if g is not None else inputs[k].new_zeros(inputs[k].shape)
        return tuple(grads)


def _composite(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
    """The layer as ember ops (the tensor backward's recomputation)."""
    projected = x.matmul(w_ih.t())
    if b_ih is not None:
        projected = projected + b_ih
    steps = projected.unbind(0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    h, c = h0, c0
    hs = [None] * len(steps)
    for t in order:
        h, c = lstm_cell(steps[t], h, c, w_hh, b_hh)
        hs[t] = h
    return stack(hs, 0), h, c


def _previous(xp, seq, first, reverse):
    """Each step's previous state in time order: ``first`` then ``seq`` shifted by one
    (forward), or ``seq`` shifted back then ``first`` (reverse)."""
    head = first[None]
    if reverse:
        return xp.concatenate([seq[1:], head], 0)
    return xp.concatenate([head, seq[:-1]], 0)


def _recurrence_grads(xp, gates, c_prev, tanh_cells, w_hh, grad_hs, grad_h, grad_c, reverse,
                      wants_h0):
    """Backpropagation through the steps, last processed first: the gradient of every
    step's gate pre-activations (T, B, 4H) and those of ``h0`` and ``c0``."""
    steps, batch, four_h = gates.shape
    hidden = four_h // 4
    order = range(steps) if reverse else range(steps - 1, -1, -1)
    last = order[-1]
    dh = grad_h.copy() if grad_h is not None else xp.zeros((batch, hidden), gates.dtype)
    dc = grad_c.copy() if grad_c is not None else xp.zeros((batch, hidden), gates.dtype)
    out_grads = None if grad_hs is None else xp.ascontiguousarray(grad_hs)
    if kernels.lstm_native_for(gates, c_prev, tanh_cells, dh, dc, forward=False) and \
            (out_grads is None or kernels.lstm_native_for(gates, out_grads, forward=False)):
        # each step's element-wise part in one compiled call (the same operations, the same
        # bits), the coefficients computed there rather than for all steps up front
        dgates = xp.empty_like(gates)
        for t in order:
            kernels.lstm_cell_backward(gates[t], c_prev[t], tanh_cells[t],
                                       None if out_grads is None else out_grads[t], dh, dc,
                                       dgates[t])
            if t != last or wants_h0:
                dh = _gemm(dgates[t], w_hh)
        return dgates, dh, dc
    i, f = gates[..., :hidden], gates[..., hidden:2 * hidden]
    g, o = gates[..., 2 * hidden:3 * hidden], gates[..., 3 * hidden:]
    # What does not depend on the recurrence, for all steps at once:
    # dG_o = dh * o_coef; dc += dh * c_coef; dG_{i,f,g} = dc * ifg_coef
    o_coef = tanh_cells * o * (1 - o)
    c_coef = o * (1 - tanh_cells * tanh_cells)
    ifg_coef = xp.empty((steps, batch, 3, hidden), dtype=gates.dtype)
    xp.multiply(g * i, 1 - i, out=ifg_coef[:, :, 0])
    xp.multiply(c_prev * f, 1 - f, out=ifg_coef[:, :, 1])
    xp.multiply(i, 1 - g * g, out=ifg_coef[:, :, 2])
    dgates = xp.empty_like(gates)
    dgates4 = dgates.reshape(steps, batch, 4, hidden)
    w = w_hh
    tmp = xp.empty((batch, hidden), dtype=gates.dtype)
    for t in order:
        if grad_hs is not None:
            dh += grad_hs[t]
        xp.multiply(dh, o_coef[t], out=dgates4[t, :, 3])
        xp.multiply(dh, c_coef[t], out=tmp)
        dc += tmp
        xp.multiply(ifg_coef[t], dc[:, None, :], out=dgates4[t, :, :3])
        dc *= f[t]  # the carry into the previous step
        if t != last or wants_h0:
            dh = _gemm(dgates[t], w)
    return dgates, dh, dc


def lstm_layer(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False):
    """One LSTM layer direction over ``x`` (T, B, I): ``(every h, last h, last c)``.

    >>> import ember
    >>> x, h0 = ember.randn(5, 2, 3), ember.zeros(2, 4)
    >>> w_ih, w_hh = ember.randn(16, 3), ember.randn(16, 4)
    >>> hs, h, c = lstm_layer(x, h0, h0, w_ih, w_hh)
    >>> tuple(hs.shape), bool((hs[-1] == h).all())
    ((5, 2, 4), True)
    """
    return LSTMLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
