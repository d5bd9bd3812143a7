"""ATen's recurrent forms (``torch.lstm_cell``, ``torch.gru``, ``torch.lstm`` on packed
data, ...), which ``ember/__init__`` re-exports: one step of a cell given its weights, or a
whole multi-layer (bidirectional) sequence given the flat list of every layer's parameters.
They run ``nn.LSTM``/``GRU``/``RNN``'s own recurrence (``modules/rnn.py``: the fused LSTM
layer and cells where they apply), so values and gradients are the modules'.

The parameter list holds, per layer and direction (forward first), ``w_ih, w_hh`` then
``b_ih, b_hh`` when ``has_biases``, then an LSTM's ``w_hr`` when its hidden state is
smaller than its cell state (a projection) -- ``nn.LSTM._flat_weights``' order.
"""
from __future__ import annotations

from .. import _functions as _F
from .._tensor import Tensor
from .._torch_function import wrap_namespace as _wrap_namespace
from .._typing import Sequence
from .modules import rnn as _R

__all__ = ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "lstm", "gru",
           "rnn_tanh", "rnn_relu"]


# ---- one step ---------------------------------------------------------------------------------
def _check_cell(input, hidden, w_ih, w_hh, gates):
    """PyTorch's checks of a cell's input, hidden states and weights."""
    input.size(1)  # a 1-d input: PyTorch's IndexError
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{w_ih.size(1)}")
    hidden_size = w_hh.size(1)
    for label, h in enumerate(hidden):
        if h.size(0) != input.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} "
                               f"batch size {h.size(0)}")
        if h.size(1) != hidden_size:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {h.size(1)}, "
                               f"expected {hidden_size}")
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.size(0) != gates * hidden_size:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden_size}, but got {w.size(0)}")


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step of (batch, input_size) input from ``hx = (h, c)``: the new ``(h, c)``;
    gates i, f, g, o.

    >>> import ember
    >>> h, c = ember.lstm_cell(ember.zeros(1, 1), [ember.zeros(1, 1), ember.ones(1, 1)],
    ...                        ember.zeros(4, 1), ember.zeros(4, 1))
    >>> c  # sigmoid(0) * 1 + sigmoid(0) * tanh(0)
    tensor([[0.5000]])
    """
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check_cell(input, (h, c), w_ih, w_hh, 4)
    return _R._cell_step("lstm_cell", _R._lstm_step, input, (h, c), (w_ih, b_ih, w_hh, b_hh))


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step of (batch, input_size) input from ``hx``: the new hidden state; gates r,
    z, n.

    >>> import ember
    >>> ember.gru_cell(ember.zeros(1, 1), ember.ones(1, 1), ember.zeros(3, 1), ember.zeros(3, 1))
    tensor([[0.5000]])
    """
    _check_cell(input, (hx,), w_ih, w_hh, 3)
    return _R._cell_step("gru_cell", _R._gru_step, input, hx, (w_ih, b_ih, w_hh, b_hh))


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step: ``tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh)``.

    >>> import ember
    >>> ember.rnn_tanh_cell(ember.ones(1, 1), ember.zeros(1, 1), ember.ones(1, 1),
    ...                     ember.ones(1, 1))
    tensor([[0.7616]])
    """
    _check_cell(input, (hx,), w_ih, w_hh, 1)
    return _R._cell_step("rnn_tanh_cell", _R._rnn_tanh_step, input, hx,
                         (w_ih, b_ih, w_hh, b_hh))


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ReLU: ``relu(input W_ih^T + b_ih + hx W_hh^T + b_hh)``.

    >>> import ember
    >>> ember.rnn_relu_cell(ember.ones(1, 1), ember.zeros(1, 1), -ember.ones(1, 1),
    ...                     ember.ones(1, 1))
    tensor([[0.]])
    """
    _check_cell(input, (hx,), w_ih, w_hh, 1)
    return _R._cell_step("rnn_relu_cell", _R._rnn_relu_step, input, hx,
                         (w_ih, b_ih, w_hh, b_hh))


# ---- whole sequences --------------------------------------------------------------------------
class _FlatRNN:
    """What ``RNNBase``'s recurrence reads of a module, made from ATen's arguments: the
    parameters as attributes ``p0, p1, ...`` named per layer and direction."""

    _run = _R.RNNBase._run
    _run_layers = _R.RNNBase._run_layers
    _run_direction = _R.RNNBase._run_direction

    def __init__(self, mode, params, has_biases, num_layers, dropout, train, bidirectional,
                 proj):
        params = list(params)
        directions = 2 if bidirectional else 1
        stride = (4 if has_biases else 2) + (1 if proj else 0)
        if len(params) % stride:
            raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by "
                               f"stride {stride}")
        if len(params) != stride * num_layers * directions:
            raise RuntimeError(f"{mode.lower()}: expected {stride * num_layers * directions} "
                               f"parameters ({num_layers} layer(s), {directions} "
                               f"direction(s)), but got {len(params)}")
        self.mode, self.num_layers, self.dropout = mode, num_layers, float(dropout)
        self.training, self.bidirectional, self.bias = bool(train), bidirectional, has_biases
        self.proj_size = params[stride - 1].size(0) if proj else 0
        self._all_weights = []
        for k in range(0, len(params), stride):
            names = [f"p{k + j}" for j in range(stride)]
            for name, p in zip(names, params[k:k + stride]):
                setattr(self, name, p)
            self._all_weights.append(names)


def _states(hx, lstm, expected):
    """The initial state of each layer and direction: ``h`` rows, or ``(h, c)`` rows;
    ``expected`` the shape of each state tensor."""
    for k, (h, shape) in enumerate(zip(hx if lstm else (hx,), expected)):
        if tuple(h.shape) != shape:
            raise RuntimeError(f"Expected hidden{f'[{k}]' if lstm else ''} size {shape}, got "
                               f"{list(h.shape)}")
    if lstm:
        return list(zip(hx[0].unbind(0), hx[1].unbind(0)))
    return list(hx.unbind(0))


def _sequence(mode, input, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
              bidirectional, batch_first):
    lstm = mode == "LSTM"
    if lstm:
        if len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        proj = hx[0].size(-1) != hx[1].size(-1)
    else:
        proj = False
    net = _FlatRNN(mode, params, has_biases, num_layers, dropout, train, bidirectional, proj)
    expected = 2 if batch_sizes is not None else 3
    if input.dim() != expected:
        raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
    w_ih = net.p0
    if input.size(-1) != w_ih.size(1):
        raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                           f"{w_ih.size(1)}, got {input.size(-1)}")
    layers = num_layers * (2 if bidirectional else 1)
    if batch_sizes is not None:
        sizes = [int(b) for b in batch_sizes.tolist()]
        batch = sizes[0] if sizes else 0
    else:
        batch = input.size(0) if batch_first else input.size(1)
    w_hh = net.p1
    hidden = (layers, batch, w_hh.size(1))
    states = _states(hx, lstm, (hidden, (layers, batch, w_hh.size(0) // 4)))
    if batch_sizes is not None:
        output, finals = net._run(input, states, sizes)
    else:
        x = input.transpose(0, 1) if batch_first else input
        output, finals = net._run(x, states)
        if batch_first:
            output = output.transpose(0, 1)
    if lstm:
        return (output, _F.stack([s[0] for s in finals], 0),
                _F.stack([s[1] for s in finals], 0))
    return output, _F.stack(finals, 0)


def _overload(name, args):
    """ATen's two overloads: ``(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` and the packed ``(data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional)``: told apart by ``params``'s place
    (a list)."""
    lstm = name == "lstm"
    packed = isinstance(args[1], Tensor) if lstm else \
        (len(args) > 2 and isinstance(args[2], Tensor))
    if packed:
        if len(args) != 9:
            raise TypeError(f"{name}() takes 9 arguments (data, batch_sizes, hx, params, "
                            f"has_biases, num_layers, dropout, train, bidirectional) but "
                            f"{len(args)} were given")
        data, batch_sizes, hx, params, *rest = args
        return (data, batch_sizes, hx, params, *rest, False)
    if len(args) != 9:
        raise TypeError(f"{name}() takes 9 arguments (input, hx, params, has_biases, "
                        f"num_layers, dropout, train, bidirectional, batch_first) but "
                        f"{len(args)} were given")
    input, hx, params, *rest = args
    return (input, None, hx, params, *rest)


def lstm(*args) -> tuple[Tensor, Tensor, Tensor]:
    """A whole LSTM: ``lstm(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` with ``hx = (h0, c0)``, or on packed data
    ``lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional)``; returns ``(output, h_n, c_n)``. ``dropout`` between layers in training.

    >>> import ember
    >>> params = [ember.zeros(4, 1), ember.zeros(4, 1)]
    >>> out, h, c = ember.lstm(ember.ones(3, 1, 1), [ember.zeros(1, 1, 1), ember.ones(1, 1, 1)],
    ...                        params, False, 1, 0.0, False, False, False)
    >>> c.flatten()  # halved at each of the three steps
    tensor([0.1250])
    """
    return _sequence("LSTM", *_overload("lstm", args))


def gru(*args) -> tuple[Tensor, Tensor]:
    """A whole GRU: ``gru(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` or ``gru(data, batch_sizes, hx, params, ...)`` on packed
    data; returns ``(output, h_n)``.

    >>> import ember
    >>> out, h = ember.gru(ember.ones(2, 1, 1), ember.ones(1, 1, 1),
    ...                    [ember.zeros(3, 1), ember.zeros(3, 1)], False, 1, 0.0, False,
    ...                    False, False)
    >>> h.flatten()  # (h + tanh(0)) / 2 at each step
    tensor([0.2500])
    """
    return _sequence("GRU", *_overload("gru", args))


def rnn_tanh(*args) -> tuple[Tensor, Tensor]:
    """A whole Elman RNN with tanh, the arguments as ``gru``'s; returns ``(output, h_n)``.

    >>> import ember
    >>> out, h = ember.rnn_tanh(ember.zeros(2, 1, 1), ember.zeros(1, 1, 1),
    ...                         [ember.ones(1, 1), ember.ones(1, 1)], False, 1, 0.0, False,
    ...                         False, False)
    >>> out.flatten()
    tensor([0., 0.])
    """
    return _sequence("RNN_TANH", *_overload("rnn_tanh", args))


def rnn_relu(*args) -> tuple[Tensor, Tensor]:
    """A whole Elman RNN with ReLU, the arguments as ``gru``'s; returns ``(output, h_n)``.

    >>> import ember
    >>> out, h = ember.rnn_relu(ember.ones(2, 1, 1), ember.zeros(1, 1, 1),
    ...                         [ember.ones(1, 1), ember.ones(1, 1)], False, 1, 0.0, False,
    ...                         False, False)
    >>> out.flatten()  # 1, then 1 + 1
    tensor([1., 2.])
    """
    return _sequence("RNN_RELU", *_overload("rnn_relu", args))


_wrap_namespace(globals(), __all__, "ember")
