"""``ember.profiler``: PyTorch's profiler API, recording ember's ops.

``with profile() as prof:`` records each built-in op the profiling thread runs (forward
and backward, named ``aten::<op>`` as ``ember.ops.aten`` names them), and
``record_function`` ranges around them; ``prof.key_averages().table(...)`` prints PyTorch's
summary table, ``export_chrome_trace`` writes a Chrome trace. Ops pay nothing while no
profiler is active (the recorder is a dispatch mode pushed only while recording).

>>> import ember
>>> from ember.profiler import profile, record_function
>>> with profile() as prof:
...     with record_function("forward"):
...         y = (ember.ones(2, 2) @ ember.ones(2, 2)).relu()
>>> [e.key for e in prof.key_averages()]
['forward', 'aten::matmul', 'aten::relu']
"""
from ._events import DeviceType, EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ._record import record_function
from .profiler import (ProfilerAction, ProfilerActivity, kineto_available, profile,
                       schedule, supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function"]
