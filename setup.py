"""Build step for ember's compiled pieces (see their sources): ember.backend._pool (the
thread pool's events and pinning), ember.backend._kernels (convolution im2col/col2im and
ReLU loops), ember.backend._casts (float32 <-> float16/bfloat16 conversions),
ember.backend._winograd (the transforms of 3x3 convolutions),
ember.backend._vector (log_softmax rows and LSTM cells in AVX2 vectors), ember._ops._apply
(built-in ops' apply) and ember.autograd._engine_loop (the backward engine's loop).

Everything else is in pyproject.toml. The extensions are optional: without a C compiler the
install still succeeds; the thread pool then waits on plain Python locks and the kernels run
as NumPy code (ember.backend.kernels), 3x3 convolutions take the im2col path, and apply and
the engine loop run as Python.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("ember.backend._pool", ["ember/backend/_pool.c"],
                             extra_compile_args=["-O2", "-std=gnu11"], optional=True),
                   Extension("ember.backend._kernels", ["ember/backend/_kernels.c"],
                             extra_compile_args=["-O3", "-std=gnu11", "-ffp-contract=off"],
                             optional=True),
                   Extension("ember.backend._winograd", ["ember/backend/_winograd.c"],
                             extra_compile_args=["-O3", "-std=gnu11", "-ffp-contract=off"],
                             optional=True),
                   Extension("ember.backend._casts", ["ember/backend/_casts.c"],
                             extra_compile_args=["-O3", "-std=gnu11", "-ffp-contract=off"],
                             optional=True),
                   Extension("ember.backend._vector", ["ember/backend/_vector.c"],
                             extra_compile_args=["-O3", "-std=gnu11", "-ffp-contract=off"],
                             optional=True),
                   Extension("ember._ops._apply", ["ember/_ops/_apply.c"],
                             extra_compile_args=["-O2", "-std=gnu11"], optional=True),
                   Extension("ember.autograd._engine_loop", ["ember/autograd/_engine_loop.c"],
                             extra_compile_args=["-O2", "-std=gnu11"], optional=True)])
