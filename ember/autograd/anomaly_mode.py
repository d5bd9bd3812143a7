"""``ember.autograd.anomaly_mode``: PyTorch's module name for anomaly detection
(``detect_anomaly``, ``set_detect_anomaly``; ember keeps them in ``anomaly``).

>>> import ember
>>> with ember.autograd.anomaly_mode.detect_anomaly():
...     ember.is_anomaly_enabled()
True
"""
from .anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
