"""``VonMises(loc, concentration)``: the circular normal distribution of angles (radians,
read modulo 2 pi).

>>> import ember
>>> from ember.distributions import VonMises
>>> d = VonMises(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([0.0])), d.variance
(tensor([-1.0738]), tensor([0.5536]))
"""
from __future__ import annotations

import math

from .._creation import beside, rand, zeros
from .._functions import where
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..backend import dtypes
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

# Polynomial approximations of the modified Bessel functions I0 and I1 (Abramowitz and
# Stegun 9.8.1-9.8.4): in (x / 3.75)^2 below 3.75, in 3.75 / x above (times e^x / sqrt x).
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3])
_LARGE = ([0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1,
           0.2635537e-1, -0.1647633e-1, 0.392377e-2],
          [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1,
           -0.2895312e-1, 0.1787654e-1, -0.420059e-2])


def _polynomial(y, coefficients):
    """Horner's rule, highest power first."""
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """``log I_order(x)`` for ``x > 0``, ``order`` 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    small = _polynomial((x / 3.75).pow(2), _SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _polynomial(3.75 / x, _LARGE[order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's (1979) sampler: wrapped Cauchy proposals, accepted per element
    until every element has one."""
    done = zeros(x.shape, dtype=dtypes.bool_)
    done = beside(done, x)
    while not bool(done.all()):
        u1, u2, u3 = beside(rand((3,) + tuple(x.shape), dtype=loc.dtype), loc).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Von Mises with mean angle ``loc`` and ``concentration`` (kappa > 0)."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.to(dtypes.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(dtypes.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=Size()):
        """Samples by rejection, in float64 whatever the dtype (in float32 the loop can run
        forever for concentrations below about 1e-4)."""
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = beside(zeros(shape, dtype=dtypes.float64), self.loc)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """The circular variance, ``1 - I1(kappa) / I0(kappa)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()


__all__ = ["VonMises"]
