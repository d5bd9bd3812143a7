"""Fixtures shared by tests/ and tests/parity/."""
import pytest

import ember
from ember.backend import parallel


@pytest.fixture
def pool2():
    """The pool forced on (whatever NumPy's BLAS does) with 2 threads; restored afterwards."""
    saved = ember.get_num_threads()
    check = parallel._CHECK_BLAS
    parallel._CHECK_BLAS = False
    ember.set_num_threads(2)
    yield
    parallel._CHECK_BLAS = check
    ember.set_num_threads(saved)


@pytest.fixture
def no_dispatch():
    """A dispatch subclass another test left alive turns the fused and array fast paths off;
    this holds dispatch off for one test that checks those paths are taken."""
    active = ember.autograd.dispatch.active
    saved, active[0] = active[0], False
    yield
    active[0] = saved


@pytest.fixture
def fake_cuda():
    """A stand-in "cuda" array module (tests/backend/fake_cuda.py) registered for one test:
    ``device="cuda"``, ``.cuda()`` and ``ember.cuda`` work on it; yields its runtime."""
    from tests.backend import fake_cuda as fake
    runtime = fake.install()
    yield runtime
    fake.uninstall()


def pytest_runtest_logreport(report):
    """With ``EMBER_FAILURE_LOG=PATH``, each failure's traceback is appended to PATH as it
    happens (pytest prints them only when the session ends, which a run stopped by a time
    limit never reaches; under pytest-xdist every worker appends its own)."""
    import os
    path = os.environ.get("EMBER_FAILURE_LOG")
    if path and report.failed:
        with open(path, "a") as f:
            f.write(f"=== {report.nodeid} ({report.when})\n{report.longreprtext}\n")
