"""The dispatch tests define Tensor subclasses with ``__torch_dispatch__``; while one is
alive every op looks at its arguments' types, so each test's classes are collected before
the next test (and the rest of the suite) runs."""
import gc

import pytest


@pytest.fixture(autouse=True)
def _collect_dispatch_subclasses():
    yield
    gc.collect()
