"""Each test gets fresh namespaces: libraries it makes are destroyed after it."""
import itertools

import pytest

import ember

_counter = itertools.count()


@pytest.fixture
def ns():
    """A namespace no other test uses."""
    return f"libtest{next(_counter)}"


@pytest.fixture
def make_lib():
    made = []

    def make(*args, **kwargs):
        lib = ember.library.Library(*args, **kwargs)
        made.append(lib)
        return lib
    yield make
    for lib in reversed(made):
        if not lib._destroyed:
            lib._destroy()
