"""``ember.quasirandom``: Sobol' low-discrepancy sequences (``torch.quasirandom``).

The unscrambled points are PyTorch's bit for bit: the direction numbers are Joe and Kuo's
(search criterion D(6), up to 21201 dimensions), read from the table SciPy ships (SciPy is
one of ember's dependencies), and point ``k`` is the XOR of the direction numbers picked
by the Gray code of ``k``. A scrambled engine with a ``seed`` draws its random bits from
MT19937 seeded as PyTorch's CPU generator is, so it gives PyTorch's points too; without a
seed the bits come from ember's default generator (``ember.manual_seed`` repeats them, but
they are not the bits PyTorch's global generator would give).

>>> import ember
>>> engine = ember.quasirandom.SobolEngine(2)
>>> engine.draw(4)
tensor([[0.0000, 0.0000],
        [0.5000, 0.5000],
        [0.7500, 0.2500],
        [0.2500, 0.7500]])
"""
from __future__ import annotations

import functools
import importlib.util
import operator
import os

import numpy as np

from . import _creation
from . import _functions as F
from ._tensor import Tensor
from .backend import dtypes, get_array_module

__all__ = ["SobolEngine"]

_MAXBIT = 30
_MAXDIM = 21201
_SCRAMBLE_SEEDS = (-2 ** 63, 2 ** 64)  # what PyTorch's manual_seed accepts


@functools.lru_cache(maxsize=1)
def _joe_kuo_table():
    """(primitive polynomials, initial direction numbers) of every dimension, as SciPy
    stores them; found without importing ``scipy.stats``, which is slow to import."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("SobolEngine needs SciPy's table of direction numbers: install scipy")
    path = os.path.join(spec.submodule_search_locations[0], "stats",
                        "_sobol_direction_numbers.npz")
    with np.load(path) as table:
        return table["poly"], table["vinit"]


def _direction_numbers(dimension):
    """The (dimension, MAXBIT) direction numbers, column j scaled to bit MAXBIT-1-j: the
    recurrence of Bratley and Fox run for all dimensions at once (a host-side table)."""
    poly, vinit = _joe_kuo_table()
    poly = poly[:dimension].astype(np.int64)
    v = np.zeros((dimension, _MAXBIT), np.int64)
    v[0] = 1
    degree = np.array([int(p).bit_length() - 1 for p in poly.tolist()], np.int64)
    for j in range(_MAXBIT):
        rows = np.arange(1, dimension)
        init = rows[degree[1:] > j]  # dimensions still on their initial numbers
        if init.size:
            v[init, j] = vinit[init, j]
        rows = rows[degree[1:] <= j]
        if rows.size == 0:
            continue
        m = degree[rows]
        new = v[rows, j - m]
        for k in range(int(m.max())):
            # coefficient k of the polynomial (after the leading one) adds 2^(k+1) v[j-k-1]
            use = (k < m) & (((poly[rows] >> np.maximum(m - 1 - k, 0)) & 1) == 1)
            new = np.where(use, new ^ (v[rows, np.maximum(j - k - 1, 0)] << (k + 1)), new)
        v[rows, j] = new
    return v << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)


def _parity(x):
    """Bitwise parity of each non-negative integer (below 2**32) of ``x``."""
    for shift in (16, 8, 4, 2, 1):
        x = x ^ (x >> shift)
    return x & 1


def _scramble_directions(v, bits):
    """Owen's linear matrix scramble: bit i (from the top) of each scrambled direction
    number is the parity of row i of the dimension's random lower-triangular matrix (unit
    diagonal; ``bits`` holds its entries, those above the diagonal unused) with the old
    number's top bits."""
    xp = get_array_module(v)
    k = np.arange(_MAXBIT)
    weight = np.ldexp(1.0, _MAXBIT - 1 - k)
    below = xp.asarray(np.where(k[None, :] < k[:, None], weight[None, :], 0.0)[:, :, None])
    # row i of every matrix as a bit mask: a dot product per row, exact in float64 (< 2^30),
    # batched over i as a matmul
    rows = xp.matmul(bits.astype("float64").transpose(1, 0, 2), below)[..., 0].T
    rows = rows.astype("int64") | xp.asarray(weight.astype(np.int64))
    out = xp.zeros_like(v)
    for i in range(_MAXBIT):
        out = out | (_parity(rows[:, i:i + 1] & v) << (_MAXBIT - 1 - i))
    return out


def _torch_random_bits(seed, count):
    """``count`` draws of PyTorch's CPU ``randint(2, ...)`` from a generator seeded with
    ``seed``: one 32-bit MT19937 number each (seeded with the seed's low 32 bits), mod 2.
    NumPy's legacy stream (frozen) seeds MT19937 the same way, and its 64-bit ``randint``
    over two values masks one 32-bit number per draw: the lowest bit, the same."""
    return np.random.RandomState(seed & 0xFFFFFFFF).randint(0, 2, size=count, dtype=np.int64)


def _check_seed(seed):
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = operator.index(seed)
    if not _SCRAMBLE_SEEDS[0] <= seed < _SCRAMBLE_SEEDS[1]:
        raise ValueError("Overflow when unpacking long long")
    return seed


def _count(n, function):
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{function}(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    return operator.index(n)


def _combinations(xp, columns):
    """Row ``i``: the XOR of the columns picked by the bits of ``i`` (2**width rows)."""
    table = xp.zeros((1, columns.shape[0]), columns.dtype)
    for bit in range(columns.shape[1]):
        table = xp.concatenate([table, table ^ columns[:, bit][None, :]])
    return table


def _gray(k):
    return k ^ (k >> 1)


class SobolEngine:
    """An engine drawing (optionally scrambled) Sobol' points in ``[0, 1)^dimension``;
    each draw continues the sequence where the previous one stopped.

    >>> import ember
    >>> engine = ember.quasirandom.SobolEngine(3, scramble=True, seed=0)
    >>> engine
    SobolEngine(dimension=3, scramble=True, seed=0)
    >>> engine.draw_base2(3).shape
    ember.Size([8, 3])
    >>> engine.num_generated
    8
    """

    MAXBIT = _MAXBIT
    MAXDIM = _MAXDIM

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        if isinstance(dimension, bool) or not hasattr(dimension, "__index__"):
            raise TypeError("zeros() takes 1 positional argument but 2 were given")
        dimension = operator.index(dimension)
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _direction_numbers(dimension)
        self.sobolstate = _creation.tensor(state, dtype=dtypes.int64, device="cpu")
        if not self.scramble:
            self.shift = _creation.zeros(dimension, dtype=dtypes.int64, device="cpu")
        else:
            self._scramble()
        self.quasi = self.shift.clone()
        # in the default dtype of the time of construction, as PyTorch keeps it
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scramble(self):
        """A random digital shift, then a random linear scramble of the direction
        numbers; the bits are drawn in PyTorch's order (shift first)."""
        shape = (self.dimension, self.MAXBIT)
        if self.seed is not None:
            seed = _check_seed(self.seed)
            bits = _torch_random_bits(seed, self.dimension * self.MAXBIT * (1 + self.MAXBIT))
            split = self.dimension * self.MAXBIT
            shift_bits = _creation.tensor(bits[:split].reshape(shape), device="cpu")
            ltm = _creation.tensor(bits[split:].reshape(shape + (self.MAXBIT,)), device="cpu")
        else:
            shift_bits = _creation.randint(2, shape, device="cpu")
            ltm = _creation.randint(2, shape + (self.MAXBIT,), device="cpu")
        powers = F.pow(2, _creation.arange(0, self.MAXBIT, device="cpu"))
        self.shift = F.mv(shift_bits, powers)
        scrambled = _scramble_directions(self.sobolstate._data, ltm._data)
        self.sobolstate = Tensor._make(scrambled)

    def _advance(self, start, count):
        """The states after each of ``count`` steps from sequence index ``start`` (an int64
        array of shape (count, dimension)): step ``j`` XORs in direction number ``l``, the
        number of trailing ones of ``j`` (0 for a negative ``j``, as PyTorch counts), so the
        total after step ``j`` follows from Gray codes."""
        quasi = self.quasi._data
        xp = get_array_module(quasi)
        if count == 0:
            return xp.zeros((0, self.dimension), quasi.dtype)
        steps = xp.asarray(np.arange(count, dtype=np.int64))
        last = steps + start  # the step just taken
        negatives = xp.minimum(steps + 1, max(0, -start))
        first = max(start, 0)
        codes = xp.where(last >= 0, _gray(xp.maximum(last, -1) + 1) ^ _gray(first), 0)
        codes = (codes ^ (negatives & 1)) & ((1 << self.MAXBIT) - 1)
        # the codes' low and high bits each pick a row of a table of all XOR combinations
        # of their direction numbers: two gathers instead of one pass per bit
        top = int(codes.max()).bit_length()
        low = top // 2
        state = self.sobolstate._data
        return (quasi[None, :] ^ _combinations(xp, state[:, :low])[codes & ((1 << low) - 1)]
                ^ _combinations(xp, state[:, low:top])[codes >> low])

    def draw(self, n: int = 1, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next ``n`` points, an (n, dimension) tensor of ``dtype`` (default: the default
        dtype); written into ``out`` (resized) when given.

        >>> import ember
        >>> engine = ember.quasirandom.SobolEngine(2)
        >>> engine.draw(3, dtype=ember.float64)
        tensor([[0.0000, 0.0000],
                [0.5000, 0.5000],
                [0.7500, 0.2500]], dtype=ember.float64)
        """
        if dtype is None:
            dtype = dtypes.get_default_dtype()
        if self.num_generated == 0 and n == 1:
            result = self._first_point.to(dtype)
        else:
            first = self.num_generated == 0
            count = _count(n - 1 if first else n, "_sobol_engine_draw")
            if count < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {count}: "
                                   f"[{count}, {self.dimension}]")
            if dtype.name not in ("float32", "float64"):
                raise NotImplementedError(f"\"_sobol_engine_draw\" not implemented for "
                                          f"'{dtype.scalar_name}'")
            states = self._advance(0 if first else self.num_generated - 1, count)
            if count:
                self.quasi = Tensor._make(states[-1].copy())
            scale = np.dtype(dtype.name).type(1.0 / 2 ** self.MAXBIT)
            result = Tensor._make(states.astype(dtype.name) * scale)
            if first:
                result = F.cat((self._first_point.to(dtype), result), dim=-2)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next ``2**m`` points; the points drawn so far and these must number a power
        of 2 (what keeps a Sobol' set balanced).

        >>> import ember
        >>> ember.quasirandom.SobolEngine(1).draw_base2(2).flatten()
        tensor([0.0000, 0.5000, 0.7500, 0.2500])
        """
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require n to be a power "
                             f"of 2. {self.num_generated} points have been previously generated, "
                             f"then: n={self.num_generated}+2**{m}={total_n}. If you still want "
                             "to do this, please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point (the same scramble); returns the engine.

        >>> import ember
        >>> engine = ember.quasirandom.SobolEngine(1)
        >>> _ = engine.draw(5)
        >>> engine.reset().draw(2).flatten()
        tensor([0.0000, 0.5000])
        """
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skips ``n`` points, as drawing them would; returns the engine.

        >>> import ember
        >>> ember.quasirandom.SobolEngine(1).fast_forward(2).draw(1)
        tensor([[0.7500]])
        """
        first = self.num_generated == 0
        count = _count(n - 1 if first else n, "_sobol_engine_ff_")
        if count > 0:
            states = self._advance(0 if first else self.num_generated - 1, count)
            self.quasi = Tensor._make(states[-1].copy())
        self.num_generated += n
        return self

    def __repr__(self):
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"
