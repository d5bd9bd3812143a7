"""Declarations of the signal family: the short-time Fourier transform and its inverse,
numerical derivatives and n-dimensional histograms (ops in ``_ops/signal.py``)."""
from __future__ import annotations

from .._ops import signal as _SG
from .._registry import op

stft = op(_SG.stft)
istft = op(_SG.istft)
gradient = op(_SG.gradient, method=False)
histogramdd = op(_SG.histogramdd, method=False)

__all__ = ["stft", "istft", "gradient", "histogramdd"]
