"""Build step for the one compiled piece of ember: ember.backend._pool (see its source).

Everything else is in pyproject.toml. The extension is optional: without a C compiler the
install still succeeds and ember's thread pool waits on plain Python locks instead.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("ember.backend._pool", ["ember/backend/_pool.c"],
                             extra_compile_args=["-O2", "-std=gnu11"], optional=True)])
