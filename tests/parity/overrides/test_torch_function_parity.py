"""``__torch_function__`` on ember and on PyTorch: the extending note's Tensor-like types,
subclass propagation, dispatch order, errors and modes, run with only the import changed."""
import functools

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

LIBS = (torch, ember)


# ---- the extending note's examples -----------------------------------------------------------
def scalar_tensor_example(lib):
    """ScalarTensor: a duck type with HANDLED_FUNCTIONS and an ``implements`` decorator."""
    handled = {}

    class ScalarTensor:
        def __init__(self, N, value):
            self._N = N
            self._value = value

        def __repr__(self):
            return "ScalarTensor(N={}, value={})".format(self._N, self._value)

        def tensor(self):
            return self._value * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor))
                                              for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def implements(torch_function):
        def decorator(func):
            functools.update_wrapper(func, torch_function)
            handled[torch_function] = func
            return func
        return decorator

    @implements(lib.mean)
    def mean(input):
        return float(input._value) / input._N

    def ensure_tensor(data):
        if isinstance(data, ScalarTensor):
            return data.tensor()
        return lib.as_tensor(data)

    @implements(lib.add)
    def add(input, other):
        try:
            if input._N == other._N:
                return ScalarTensor(input._N, input._value + other._value)
            raise ValueError("Shape mismatch!")
        except AttributeError:
            return lib.add(ensure_tensor(input), ensure_tensor(other))

    d = ScalarTensor(5, 2)
    s = ScalarTensor(2, 2)
    t = lib.tensor([[1, 1], [1, 1]])
    out = [repr(d), repr(d.tensor()), repr(lib.mean(d)), repr(lib.add(s, s)),
           repr(lib.add(s, t)), repr(lib.add(t, s)), mean.__name__]
    out.append(error_of(lambda: lib.mul(s, 3)))
    out.append(error_of(lambda: lib.nn.functional.relu(s)))
    return out


def diagonal_tensor_example(lib):
    """DiagonalTensor: a duck type with ``__array__`` and handlers that raise or refuse."""
    handled = {}

    def implements_diagonal(torch_function):
        @functools.wraps(torch_function)
        def decorator(func):
            handled[torch_function] = func
            return func
        return decorator

    class DiagonalTensor:
        def __init__(self, N, value):
            self._N = N
            self._i = value

        def __repr__(self):
            return f"DiagonalTensor(N={self._N}, value={self._i})"

        def __array__(self, dtype=None, copy=None):
            return self._i * np.eye(self._N)

        def tensor(self):
            return self._i * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in handled:
                return NotImplemented
            return handled[func](*args, **kwargs)

    @implements_diagonal(lib.mean)
    def mean(mat):
        return float(mat._i) / mat._N

    @implements_diagonal(lib.mm)
    def diagonal_mm(mat1, mat2):
        return 0

    @implements_diagonal(lib.div)
    def diagonal_div(input, other, out=None):
        return -1

    @implements_diagonal(lib.add)
    def add(mat1, mat2):
        raise ValueError("no add")

    d, t = DiagonalTensor(5, 2), lib.eye(5)
    return [lib.mean(d), lib.mm(d, d), lib.mm(t, d), lib.mm(d, t), lib.div(d, t), lib.div(t, d),
            error_of(lambda: lib.add(d, d)), error_of(lambda: lib.add(t, d)),
            error_of(lambda: lib.sum(d)), repr(d.tensor())]


def metadata_tensor_example(lib):
    """MetadataTensor: a wrapper that unwraps its arguments and wraps the result."""
    class MetadataTensor:
        def __init__(self, data, metadata=None, **kwargs):
            self._t = lib.as_tensor(data, **kwargs)
            self._metadata = metadata

        def __repr__(self):
            return "Metadata:\n{}\n\ndata:\n{}".format(self._metadata, self._t)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            metadatas = tuple(a._metadata for a in args if hasattr(a, "_metadata"))
            args = [getattr(a, "_t", a) for a in args]
            ret = func(*args, **kwargs)
            return MetadataTensor(ret, metadata=metadatas[0])

    m = MetadataTensor([[1, 2], [3, 4]], metadata={"owner": "Ministry of Silly Walks"})
    t = lib.tensor([[1, 2], [1, 2]])
    return [repr(lib.add(t, m)), repr(lib.mul(t, m))]


@pytest.mark.parametrize("example", [scalar_tensor_example, diagonal_tensor_example,
                                     metadata_tensor_example])
def test_the_notes_tensor_like_types(example):
    assert example(ember) == example(torch)


# ---- subclasses ------------------------------------------------------------------------------
def subclasses(lib):
    class Tagged(lib.Tensor):
        pass

    class SubTagged(Tagged):
        pass

    class Other(lib.Tensor):
        pass

    class Logged(lib.Tensor):
        log = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)
    return Tagged, SubTagged, Other, Logged


_CLASSES = {lib: subclasses(lib) for lib in LIBS}

OPS = {
    "add scalar": lambda lib, x: x + 1.5,
    "radd": lambda lib, x: 2 * x - 1,
    "mul self": lambda lib, x: x * x,
    "exp method": lambda lib, x: x.exp(),
    "tanh function": lambda lib, x: lib.tanh(x),
    "sum": lambda lib, x: x.sum(),
    "mean dim": lambda lib, x: x.mean(0, keepdim=True),
    "getitem": lambda lib, x: x[1:, 0],
    "transpose": lambda lib, x: x.T,
    "view": lambda lib, x: x.view(-1),
    "matmul": lambda lib, x: x @ x.T,
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, dim=1),
    "linear": lambda lib, x: lib.nn.functional.linear(x, x),
    "cat with plain": lambda lib, x: lib.cat([x, lib.ones(2, 3, dtype=x.dtype)]),
    "plain first": lambda lib, x: lib.add(lib.ones(3, dtype=x.dtype), x),
    "max values": lambda lib, x: lib.max(x, 1)[0],
    "unbind": lambda lib, x: x.unbind(0),
    "clone": lambda lib, x: x.clone(),
    "to double": lambda lib, x: x.to(lib.float64),
}


def _run_op(name, lib, a, subclass_index=0):
    cls = _CLASSES[lib][subclass_index]
    return OPS[name](lib, a.as_subclass(cls))


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ops_on_subclasses_values_gradients_and_types(name, dtype):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(dtype)
    compare(lambda lib, a: _run_op(name, lib, a), x)

    def type_names(lib):
        out = _run_op(name, lib, lib.tensor(x))
        items = out if isinstance(out, tuple) else (out,)
        return [type(o).__name__ for o in items]
    assert type_names(ember) == type_names(torch)


def test_noncontiguous_subclass_input():
    x = np.random.default_rng(1).standard_normal((3, 4))
    compare(lambda lib, a: _run_op("mul self", lib, a) + _run_op("exp method", lib, a), x,
            noncontiguous=True)


def test_logging_subclass_sees_the_same_calls():
    def logged(lib):
        Logged = _CLASSES[lib][3]
        Logged.log.clear()
        x = lib.tensor([[1.0, -2.0], [3.0, 4.0]]).as_subclass(Logged)
        Logged.log.clear()
        y = (x * 2 + 1).sum(0)
        z = lib.nn.functional.relu(lib.mul(x, x))
        _ = z.shape, z.dtype
        return Logged.log[:], type(y).__name__, repr(y)
    assert logged(ember) == logged(torch)


def test_most_derived_subclass_and_unrelated_subclasses():
    def results(lib):
        Tagged, SubTagged, Other, _ = _CLASSES[lib]
        a = lib.ones(2).as_subclass(Tagged)
        s = lib.ones(2).as_subclass(SubTagged)
        b = lib.ones(2).as_subclass(Other)
        return [type(a + s).__name__, type(s + a).__name__, type(lib.add(a, s)).__name__,
                error_of(lambda: a + b), error_of(lambda: lib.add(a, b)),
                error_of(lambda: lib.cat([b, a]))]
    ember_results, torch_results = results(ember), results(torch)
    assert ember_results[:4] == torch_results[:4]
    # the messages name the test's classes, defined once per library
    assert [r and r[1].replace("torch.", "") for r in ember_results[4:]] == \
        [r and r[1].replace("torch.", "") for r in torch_results[4:]]


def test_as_subclass_gradient_and_repr():
    def run(lib):
        Tagged = _CLASSES[lib][0]
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.as_subclass(Tagged)
        (y * y).sum().backward()
        return repr(y.detach()), y.grad_fn.name(), x.grad.tolist(), type(x.grad).__name__, \
            repr(lib.ones(2, 2).as_subclass(Tagged))
    assert run(ember) == run(torch)


def test_parameter_opts_out():
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2))
        return type(p * 2).__name__, type(p.detach()).__name__, type(p.sum()).__name__
    assert run(ember) == run(torch)


def test_disable_subclass_dispatch():
    def run(lib):
        a = lib.ones(2).as_subclass(_CLASSES[lib][0])
        with lib._C.DisableTorchFunctionSubclass():
            inside = type(a + 1).__name__, lib._C._is_torch_function_enabled()
        return inside, type(a + 1).__name__, lib._C._is_torch_function_enabled()
    assert run(ember) == run(torch)


# ---- ordering and NotImplemented -------------------------------------------------------------
def ordering(lib):
    log = []

    def handler(name, answer):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((name, [t.__name__ for t in types]))
            return answer
        return __torch_function__
    Base = type("Base", (), {"__torch_function__": handler("Base", NotImplemented)})
    Sub = type("Sub", (Base,), {"__torch_function__": handler("Sub", NotImplemented)})
    Last = type("Last", (), {"__torch_function__": handler("Last", "last")})
    results = [lib.cat([Base(), Sub(), Last(), Base()]),
               lib.add(Last(), Sub()),
               lib.stack([lib.ones(1), Sub(), Last()])]
    errors = [error_of(lambda: lib.cat([Base(), Sub()]))]
    return results, log, [(e[0], e[1].split(";")[0]) for e in errors]


def test_dispatch_order_and_types():
    assert ordering(ember) == ordering(torch)


def test_all_notimplemented_errors():
    def errors(lib):
        class Refuses:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        r = Refuses()
        cases = [lambda: lib.mean(r), lambda: lib.add(lib.ones(1), r),
                 lambda: lib.nn.functional.relu(r), lambda: lib.nn.functional.linear(r, r),
                 lambda: lib.ones(1) + r, lambda: lib.ones(1) * r]
        return [error_of(c) for c in cases]
    assert errors(ember) == errors(torch)


# ---- modes -----------------------------------------------------------------------------------
def mode_log(lib):
    log = []

    class Log(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((func.__name__, len(args), kwargs or None))
            return func(*args, **(kwargs or {}))

    with Log():
        x = lib.zeros(2, 3)
        y = lib.ones(2, 3)
        z = lib.add(x, y, alpha=2)
        z = z * 3 - y
        z = z.exp().sum(1)
        w = lib.nn.functional.linear(y, y)
        _ = x.shape, len(x), z.tanh(), lib.cat([z, z]), w.view(-1), x[0]
        out = lib.nn.functional.relu(z)
    return log, out.tolist()


def test_a_mode_sees_the_same_calls():
    assert mode_log(ember) == mode_log(torch)


def test_nested_modes_and_replaced_results():
    def run(lib):
        log = []

        class Named(lib.overrides.TorchFunctionMode):
            def __init__(self, name):
                super().__init__()
                self.name = name

            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append((self.name, func.__name__))
                if func is lib.mul:
                    return "replaced"
                return func(*args, **(kwargs or {}))
        x = lib.ones(2)
        with Named("outer"), Named("inner"):
            a = lib.neg(x)
            b = lib.mul(x, 2)
        return log, a.tolist(), b
    assert run(ember) == run(torch)
