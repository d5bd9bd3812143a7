"""ember's random number generators: reproducible after ``manual_seed``.

The stream is NumPy's PCG64, not PyTorch's Mersenne Twister, so the numbers
differ from PyTorch's for the same seed; they repeat exactly across runs.

>>> import ember
>>> _ = ember.manual_seed(0); a = ember.rand(3)
>>> _ = ember.manual_seed(0); b = ember.rand(3)
>>> bool((a == b).all())
True
"""
import pickle

import numpy as np

from ._tensor import Tensor

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so a fresh process is deterministic too


class Generator:
    """A random stream; pass ``generator=`` to the random functions to use it."""

    def __init__(self, device="cpu"):
        self.device = device
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed & (2 ** 64 - 1)))
        return self

    def seed(self):
        seed = int(np.random.SeedSequence().entropy) & (2 ** 63 - 1)
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        state = pickle.dumps((self._seed, self._rng.bit_generator.state))
        return Tensor._make(np.frombuffer(state, np.uint8).copy())  # a uint8 tensor of the bytes

    def set_state(self, state):
        self._seed, bit_state = pickle.loads(bytes(state.tolist()))
        self._rng.bit_generator.state = bit_state
        return self


default_generator = Generator()


#: While a vmap runs, ``ember._functorch`` puts its randomness policy here: ``check()``
#: raises in randomness="error" mode, ``batch_size()`` is the size of the draws' batch
#: dim in "different" mode (else None) and ``wrap(t)`` makes such a draw batched.
vmap_randomness = None


def check_inplace_draw(target):
    """Called by the in-place random fills: vmap's "different" mode refuses to fill a
    tensor that is not batched (every sample would see the same numbers)."""
    if vmap_randomness is not None:
        vmap_randomness.check_fill(target)


def rng(generator=None):
    """The NumPy random stream of ``generator`` (or of the default one)."""
    if vmap_randomness is not None:
        vmap_randomness.check()
    return (generator or default_generator)._rng


def manual_seed(seed):
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)
