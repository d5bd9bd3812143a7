"""Tensor.__init_subclass__ is set by two layers (__torch_function__ and __torch_dispatch__):
each hook calls the one installed before it, so a new subclass gets both."""
import ember


def test_a_wrapper_subclass_skips_the_legacy_constructor_and_logs_functions():
    class Wrapped(ember.Tensor):  # dispatch's hook: no legacy Tensor(size) after __new__
        @staticmethod
        def __new__(cls, size):
            return ember.Tensor._make_wrapper_subclass(cls, size, dtype=ember.float64)

    w = Wrapped((2, 3))
    assert tuple(w.shape) == (2, 3) and w.dtype == ember.float64 and w.stride() == (3, 1)

    calls = []

    class Logged(ember.Tensor):  # __torch_function__'s hook: the subclass dispatches
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = ember.ones(2).as_subclass(Logged)
    y = ember.add(x, x)
    assert type(y) is Logged and "add" in calls
