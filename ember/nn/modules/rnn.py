"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, as in PyTorch.

Parameter names, shapes, gate order and default initialization follow PyTorch, so a
PyTorch state_dict loads into these modules and gives the same numbers.

>>> import ember, ember.nn as nn
>>> lstm = nn.LSTM(4, 6, num_layers=2)
>>> out, (h, c) = lstm(ember.randn(5, 3, 4))
>>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
((5, 3, 6), (2, 3, 6), (2, 3, 6))
"""
import math
import numbers
import warnings

from ... import _autocast, _functions as _F
from ..._creation import empty
from ...backend.dtypes import float32, float64
from ..._ops.rnn_ops import lstm_cell as _lstm_cell, lstm_layer as _lstm_layer
from ..._ops.linalg import linear as _linear_2d
from ..._ops.rnn_cell_ops import FusedGRUCell as _FusedGRUCell, FusedLSTMCell as _FusedLSTMCell
from ...autograd.dispatch import active as _dispatch_active
from ...autograd.batching import hooks as _batching
from ...autograd.grad_mode import no_grad
from ...device import check_device
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _to(state, dtype):
    """A state (tensor or (h, c)) or weight in ``dtype`` (None: as it is); autocast's
    lower precision for the recurrent layers PyTorch runs fused (cuDNN, oneDNN)."""
    return state if dtype is None else _autocast.cast_floating(state, None, dtype)


def _cell_step(kind, step, input, hx, weights):
    """One cell step, cast as autocast wants PyTorch's ``<kind>`` op (lstm_cell, ...)."""
    lower = _autocast.lower_precision_module(kind, input.device.type)
    with _autocast.suspended():
        w_ih, b_ih, w_hh, b_hh = (_to(w, lower) for w in weights)
        return step(_linear(_to(input, lower), w_ih, b_ih), _to(hx, lower), w_hh, b_hh)


def _linear(x, w, b=None):
    out = x.matmul(w.t())
    return out if b is None else out + b


def _dropout(x, p, training):
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0
    mask = x.new_empty(x.shape).bernoulli_(1 - p)
    return x * mask / (1 - p)


# ---- one time step of each cell kind; ``xi`` is the precomputed input projection ----

def _rnn_tanh_step(xi, h, w_hh, b_hh):
    return _F.tanh(xi + _linear(h, w_hh, b_hh))


def _rnn_relu_step(xi, h, w_hh, b_hh):
    return _F.relu(xi + _linear(h, w_hh, b_hh))


def _lstm_step(xi, hc, w_hh, b_hh, w_hr=None):
    h, c = _lstm_cell(xi, hc[0], hc[1], w_hh, b_hh)
    if w_hr is not None:
        h = h.matmul(w_hr.t())
    return h, c


def _gru_step(xi, h, w_hh, b_hh):
    gh = _linear(h, w_hh, b_hh)
    i_r, i_z, i_n = xi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = _F.sigmoid(i_r + h_r)
    z = _F.sigmoid(i_z + h_z)
    n = _F.tanh(i_n + h_n * r)
    return (h - n) * z + n


class RNNBase(Module):
    """Base class of RNN, LSTM and GRU: parameters, checks and the layer/direction loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        check_device(device)  # 'cpu' or 'meta': refuse any other
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode in ("RNN_TANH", "RNN_RELU"):
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                params = [empty((gate_size, layer_input_size), dtype=dtype, device=device),
                          empty((gate_size, real_hidden_size), dtype=dtype, device=device)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [empty(gate_size, dtype=dtype, device=device),
                               empty(gate_size, dtype=dtype, device=device)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(empty((proj_size, hidden_size), dtype=dtype, device=device))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, p in zip(names, params):
                    setattr(self, name, Parameter(p))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """No-op (PyTorch uses it to compact weights for cuDNN)."""

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        with no_grad():
            for weight in self.parameters():
                weight.uniform_(-stdv, stdv)

    def check_input(self, input, batch_sizes=None):
        """Check the input's dtype, rank and feature size as PyTorch does."""
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). "
                f"Convert input: input.to({w0.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        """(num_layers * num_directions, batch, hidden or proj size)."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        """Raise PyTorch's error when ``hx`` does not have the expected shape."""
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        """Check the input and the initial hidden state."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- the recurrence ----
    def _run(self, input, states, batch_sizes=None):
        """input: (T, B, F) time-major, or the (N, F) data of a packed batch whose step ``t``
        holds ``batch_sizes[t]`` rows; states: list (per layer*direction) of state objects.

        Returns the output in the input's layout and the list of final states.
        """
        lower = _autocast.lower_precision_module(self.mode.lower(), input.device.type)
        with _autocast.suspended():  # one op for autocast, as PyTorch's fused layers
            return self._run_layers(_to(input, lower), [_to(s, lower) for s in states],
                                    batch_sizes, lower)

    def _run_layers(self, input, states, batch_sizes, dtype):
        num_directions = 2 if self.bidirectional else 1
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                out, state = self._run_direction(layer_input, states[idx], idx, direction == 1,
                                                 batch_sizes, dtype)
                outs.append(out)
                finals.append(state)
            layer_output = outs[0] if num_directions == 1 else _F.cat(outs, -1)
            if layer < self.num_layers - 1:
                layer_output = _dropout(layer_output, self.dropout, self.training)
            layer_input = layer_output
        return layer_input, finals

    def _run_direction(self, layer_input, state, idx, reverse, batch_sizes, dtype=None):
        """One layer in one direction: the outputs of all steps (in time order, stacked, or
        concatenated for a packed batch) and the final state.

        A dense LSTM sequence without projection runs as one fused op (``_lstm_fusable``);
        everything else runs cell by cell here. In a packed batch the running sequences are
        the first rows; a sequence that ends leaves its state as its final one (as the
        reverse direction starts it)."""
        mode = self.mode
        names = self._all_weights[idx]
        w_ih, w_hh = _to(getattr(self, names[0]), dtype), _to(getattr(self, names[1]), dtype)
        b_ih = _to(getattr(self, names[2]), dtype) if self.bias else None
        b_hh = _to(getattr(self, names[3]), dtype) if self.bias else None
        if mode == "LSTM" and batch_sizes is None and self.proj_size == 0 and \
                _lstm_fusable(layer_input, state, (w_ih, w_hh, b_ih, b_hh)):
            hs, h, c = _lstm_layer(layer_input, state[0], state[1], w_ih, w_hh, b_ih, b_hh,
                                   reverse)
            return hs, (h, c)
        step = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN_TANH": _rnn_tanh_step,
                "RNN_RELU": _rnn_relu_step}[mode]
        if mode in _FUSED_STEPS and self.proj_size == 0 and \
                _cells_fusable(layer_input, state, (w_ih, w_hh, b_ih, b_hh)):
            step = _FUSED_STEPS[mode]
        extra = (_to(getattr(self, names[-1]), dtype),) if self.proj_size > 0 else ()
        projected = _linear(layer_input, w_ih, b_ih)
        xs = projected.unbind(0) if batch_sizes is None else projected.split(batch_sizes, 0)
        if reverse:
            xs = xs[::-1]
        full_state, running, ended = state, None, []
        if batch_sizes is not None:
            running = batch_sizes[-1] if reverse else batch_sizes[0]
            state = _state_rows(full_state, 0, running)
        hs = []
        for xi in xs:
            if running is not None and xi.size(0) != running:
                if xi.size(0) < running:  # sequences ending: keep their last state
                    ended.append(_state_rows(state, xi.size(0), running))
                    state = _state_rows(state, 0, xi.size(0))
                else:  # reverse direction: sequences starting from their initial state
                    state = _cat_states([state, _state_rows(full_state, running, xi.size(0))])
                running = xi.size(0)
            state = step(xi, state, w_hh, b_hh, *extra)
            hs.append(state[0] if mode == "LSTM" else state)
        if ended:
            state = _cat_states([state] + ended[::-1])
        hs = hs[::-1] if reverse else hs
        return (_F.stack(hs, 0) if batch_sizes is None else _F.cat(hs, 0)), state


def _lstm_fusable(x, state, weights):
    """Whether the fused LSTM layer op takes this sequence: a non-empty float32/float64
    batch on the CPU whose states and weights (None: no bias) share its dtype, outside vmap
    (which has no batching rule for it). Anything else -- meta tensors, half precision,
    mixed dtypes, empty sequences, vmap -- runs cell by cell."""
    dtype = x.dtype
    return (dtype in _FUSED_DTYPES and not x.is_meta and x.numel() > 0 and _batching[0] is None
            and all(t is None or t.dtype == dtype for t in (*state, *weights)))


_FUSED_DTYPES = (float32, float64)


def _cells_fusable(x, state, weights):
    """Whether the steps may run as one fused cell op each (``_ops/rnn_cell_ops.py``): as
    ``_lstm_fusable``, and no ``__torch_dispatch__`` handler active (it sees the
    composite's aten ops, which PyTorch's CPU cells are made of)."""
    return not _dispatch_active[0] and _lstm_fusable(
        x, state if isinstance(state, tuple) else (state,), weights)


def _fused_lstm_step(xi, hc, w_hh, b_hh):
    return _FusedLSTMCell.apply(xi, _linear_2d(hc[0], w_hh, b_hh), hc[1])


def _fused_gru_step(xi, h, w_hh, b_hh):
    return _FusedGRUCell.apply(xi, _linear_2d(h, w_hh, b_hh), h)


_FUSED_STEPS = {"LSTM": _fused_lstm_step, "GRU": _fused_gru_step}


def _state_rows(state, start, stop):
    if isinstance(state, tuple):
        return tuple(s[start:stop] for s in state)
    return state[start:stop]


def _cat_states(states):
    if isinstance(states[0], tuple):
        return tuple(_F.cat(parts, 0) for parts in zip(*states))
    return _F.cat(states, 0)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return _packed_forward(self, input, hx)
        if input.dim() not in (2, 3):
            raise ValueError(
                f"RNN: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        return _single_state_forward(self, input, hx)


def _packed_forward(self, packed, hx):
    """RNN/LSTM/GRU over a PackedSequence: a PackedSequence out, and final states that are
    each sequence's state at its own last step, in the caller's batch order."""
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    batch_sizes = [int(b) for b in batch_sizes.tolist()]
    num_directions = 2 if self.bidirectional else 1
    lstm = self.mode == "LSTM"
    if hx is None:
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        shape = (self.num_layers * num_directions, batch_sizes[0])
        hx = data.new_zeros(*shape, out_size)
        if lstm:
            hx = (hx, data.new_zeros(*shape, self.hidden_size))
    elif sorted_indices is not None:
        hx = _permute_hidden(hx, sorted_indices)
    self.check_forward_args(data, hx, batch_sizes)
    states = list(zip(hx[0].unbind(0), hx[1].unbind(0))) if lstm else list(hx.unbind(0))
    output, finals = self._run(data, states, batch_sizes)
    if lstm:
        hidden = (_F.stack([s[0] for s in finals], 0), _F.stack([s[1] for s in finals], 0))
    else:
        hidden = _F.stack(finals, 0)
    if unsorted_indices is not None:
        hidden = _permute_hidden(hidden, unsorted_indices)
    return PackedSequence(output, packed.batch_sizes, sorted_indices, unsorted_indices), hidden


def _permute_hidden(hx, permutation):
    if isinstance(hx, tuple):
        return tuple(h.index_select(1, permutation) for h in hx)
    return hx.index_select(1, permutation)


def _single_state_forward(self, input, hx):
    is_batched = input.dim() == 3
    batch_dim = 0 if self.batch_first else 1
    if not is_batched:
        input = input.unsqueeze(batch_dim)
        if hx is not None:
            if hx.dim() != 2:
                raise RuntimeError(
                    f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
    elif hx is not None and hx.dim() != 3:
        raise RuntimeError(
            f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
    num_directions = 2 if self.bidirectional else 1
    max_batch_size = input.size(0) if self.batch_first else input.size(1)
    if hx is None:
        hx = input.new_zeros(self.num_layers * num_directions, max_batch_size,
                             self.hidden_size)
    self.check_forward_args(input, hx)
    x = input.transpose(0, 1) if self.batch_first else input
    output, finals = self._run(x, list(hx.unbind(0)))
    if self.batch_first:
        output = output.transpose(0, 1)
    hidden = _F.stack(finals, 0)
    if not is_batched:
        output = output.squeeze(batch_dim)
        hidden = hidden.squeeze(1)
    return output, hidden


class LSTM(RNNBase):
    """Long short-term memory; gates i, f, g, o in that order, optional projection."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):
        """(num_layers * num_directions, batch, hidden_size)."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return _packed_forward(self, input, hx)
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            h_zeros = input.new_zeros(self.num_layers * num_directions, max_batch_size,
                                      real_hidden_size)
            c_zeros = input.new_zeros(self.num_layers * num_directions, max_batch_size,
                                      self.hidden_size)
            hx = (h_zeros, c_zeros)
        else:
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but "
                                       f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx)
        x = input.transpose(0, 1) if self.batch_first else input
        states = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        output, finals = self._run(x, states)
        if self.batch_first:
            output = output.transpose(0, 1)
        h_n = _F.stack([s[0] for s in finals], 0)
        c_n = _F.stack([s[1] for s in finals], 0)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit; gates r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return _packed_forward(self, input, hx)
        if input.dim() not in (2, 3):
            raise ValueError(f"GRU: Expected input to be 2D or 3D, got {input.dim()}D instead")
        return _single_state_forward(self, input, hx)


class RNNCellBase(Module):
    """Base class of the single-step cells: weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        check_device(device)  # 'cpu' or 'meta': refuse any other
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        with no_grad():
            for weight in self.parameters():
                weight.uniform_(-stdv, stdv)

    def _weights(self):
        return self.weight_ih, self.bias_ih, self.weight_hh, self.bias_hh

    def _prepare(self, name, input, hx, n_states):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            if n_states == 1:
                if hx.dim() not in (1, 2):
                    raise ValueError(
                        f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
            else:
                for idx, value in enumerate(hx):
                    if value.dim() not in (1, 2):
                        raise ValueError(f"{name}: Expected hx[{idx}] to be 1D or 2D, got "
                                         f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = input.new_zeros(input.size(0), self.hidden_size)
            hx = z if n_states == 1 else (z, z)
        elif not is_batched:
            hx = hx.unsqueeze(0) if n_states == 1 else tuple(h.unsqueeze(0) for h in hx)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        check_device(device)  # 'cpu' or 'meta': refuse any other
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype, device=device)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare("RNNCell", input, hx, 1)
        if self.nonlinearity == "tanh":
            step = _rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = _rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = _cell_step(f"rnn_{self.nonlinearity}_cell", step, input, hx, self._weights())
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        check_device(device)  # 'cpu' or 'meta': refuse any other
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype, device=device)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare("LSTMCell", input, hx, 2)
        h, c = _cell_step("lstm_cell", _lstm_step, input, hx, self._weights())
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step; returns h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        check_device(device)  # 'cpu' or 'meta': refuse any other
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype, device=device)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare("GRUCell", input, hx, 1)
        ret = _cell_step("gru_cell", _gru_step, input, hx, self._weights())
        return ret if is_batched else ret.squeeze(0)


