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
