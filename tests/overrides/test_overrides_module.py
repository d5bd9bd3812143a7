"""``ember.overrides``: the lists, the helpers for one's own functions, and every
overridable function really dispatching."""
import inspect
import subprocess
import sys

import pytest

import ember
import ember.nn.functional as F
from ember import overrides
from ember.overrides import (get_ignored_functions, get_overridable_functions,
                             get_testing_overrides, handle_torch_function, has_torch_function,
                             has_torch_function_unary, has_torch_function_variadic,
                             is_tensor_like, is_tensor_method_or_property, resolve_name,
                             wrap_torch_function, TorchFunctionMode)


class Marker:
    """Answers every call with the function it was given."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("marker", func)


class Sub(ember.Tensor):
    pass


def test_has_torch_function():
    t, s = ember.ones(1), ember.ones(1).as_subclass(Sub)
    assert not has_torch_function((t, 1, "a"))
    assert has_torch_function((t, Marker())) and has_torch_function([s])
    assert has_torch_function_unary(s) and not has_torch_function_unary(t)
    assert has_torch_function_variadic(1, t, Marker()) and not has_torch_function_variadic(t)
    p = ember.nn.Parameter(ember.ones(1))
    assert not has_torch_function((p,))  # Parameter opts out
    with ember._C.DisableTorchFunctionSubclass():
        assert not has_torch_function((s, Marker()))

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    with Mode():
        assert has_torch_function((t,))


def my_func(x, scale=2):
    """A user's function taking part in the protocol."""
    if has_torch_function((x,)):
        return handle_torch_function(my_func, (x,), x, scale=scale)
    return x * scale


def test_handle_torch_function_for_ones_own_function():
    assert my_func(ember.ones(1)).tolist() == [2.0]
    assert my_func(Marker()) == ("marker", my_func)
    seen = []

    class Spy:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func, types, args, kwargs))
            return NotImplemented
    spy = Spy()
    with pytest.raises(TypeError) as e:
        my_func(spy)
    assert seen == [(my_func, (Spy,), (spy,), {"scale": 2})]
    assert str(e.value) == (f"no implementation found for '{__name__}.my_func' on types that "
                            f"implement __torch_function__: [{Spy!r}]")


def test_handle_torch_function_lists_plain_tensors_in_types():
    seen = []

    class Spy(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(types)
            return "spy"
    s = ember.ones(1).as_subclass(Spy)
    t = ember.ones(1)
    assert handle_torch_function(my_func, (t, s), t, s) == "spy"
    assert seen == [(Spy, ember.Tensor)]


def test_wrap_torch_function():
    @wrap_torch_function(lambda a, b=None: (a, b))
    def combine(a, b=None):
        return a + (0 if b is None else b)
    assert combine(ember.ones(1), ember.ones(1)).tolist() == [2.0]
    assert combine(ember.ones(1), Marker()) == ("marker", combine)


def test_is_tensor_like():
    assert is_tensor_like(ember.ones(1)) and is_tensor_like(ember.ones(1).as_subclass(Sub))
    assert is_tensor_like(Marker()) and is_tensor_like(Marker)
    assert not is_tensor_like(1.0) and not is_tensor_like([ember.ones(1)])


def test_is_tensor_method_or_property():
    assert is_tensor_method_or_property(ember.Tensor.add)
    assert is_tensor_method_or_property(ember.Tensor.shape.__get__)
    assert is_tensor_method_or_property(ember.Tensor.__add__)
    assert not is_tensor_method_or_property(ember.add)
    assert not is_tensor_method_or_property(F.relu)


def test_overridable_and_ignored_functions():
    table = get_overridable_functions()
    assert set(table) == {ember, F, ember.linalg, ember.Tensor}
    assert ember.add in table[ember] and ember.matmul in table[ember]
    assert F.relu in table[F] and F.conv2d in table[F] and ember.linalg.det in table[ember.linalg]
    tensor_members = table[ember.Tensor]
    assert ember.Tensor.add in tensor_members and ember.Tensor.add_ in tensor_members
    assert ember.Tensor.shape.__get__ in tensor_members
    assert ember.Tensor.__add__ in tensor_members
    ignored = get_ignored_functions()
    assert {ember.zeros, ember.tensor, ember.is_tensor, ember.manual_seed,
            ember.Tensor.as_subclass} <= ignored
    assert ember.add not in ignored and ember.zeros_like not in ignored
    assert not ignored & set(table[ember])


def test_resolve_name():
    assert resolve_name(ember.add) == "ember.add"
    assert resolve_name(F.relu) == "ember.nn.functional.relu"
    assert resolve_name(ember.linalg.det) == "ember.linalg.det"
    assert resolve_name(ember.Tensor.add) == "ember.Tensor.add"
    assert resolve_name(ember.Tensor.__add__) == "ember.Tensor.__add__"
    assert resolve_name(ember.Tensor.shape.__get__) == "ember.Tensor.shape.__get__"
    assert resolve_name(len) is None


def test_testing_overrides_have_the_functions_signatures():
    dummies = get_testing_overrides()
    assert set(dummies) >= set(get_overridable_functions()[ember])
    for func in (ember.add, F.conv2d, ember.linalg.vector_norm, ember.Tensor.view):
        assert inspect.signature(dummies[func]) == inspect.signature(func)
    assert dummies[ember.add](ember.ones(1), 2, alpha=3) == -1
    with pytest.raises(TypeError):
        dummies[ember.add](ember.ones(1), 2, 3)  # alpha is keyword-only, as in the function


def _marker_args(func):
    """Arguments for ``func``: a Marker for each required parameter."""
    dummy = get_testing_overrides()[func]
    params = inspect.signature(dummy).parameters.values()
    args, kwargs = [], {}
    for p in params:
        if p.default is not p.empty or p.kind in (p.VAR_KEYWORD,):
            continue
        if p.kind is p.VAR_POSITIONAL:
            args.append(Marker())
        elif p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = Marker()
        else:
            args.append(Marker())
    return args, kwargs


def _namespaces():
    table = get_overridable_functions()
    return [(ns, f) for ns in (ember, F, ember.linalg) for f in table[ns]]


@pytest.mark.parametrize("namespace, func", _namespaces(),
                         ids=[resolve_name(f) for _, f in _namespaces()])
def test_every_overridable_function_dispatches(namespace, func):
    args, kwargs = _marker_args(func)
    if not args and not kwargs:
        pytest.skip("no required argument")
    assert func(*args, **kwargs) == ("marker", func)


def test_every_tensor_method_dispatches_on_a_marker_argument():
    from ember._tensor_methods import OPERATOR_REPORTS
    reported_as = {getattr(ember.Tensor, dunder): getattr(ember.Tensor, method)
                   for dunder, method in OPERATOR_REPORTS.items()}  # a + b is Tensor.add
    failures = []
    for func in get_overridable_functions()[ember.Tensor]:
        if getattr(func, "__name__", "") == "__get__":
            result = func(Marker())
        else:
            args, kwargs = _marker_args(func)
            if not args:
                args = [Marker()]
            result = func(*args, **kwargs)
        if result != ("marker", reported_as.get(func, func)):
            failures.append((resolve_name(func), result))
    assert failures == []


def test_ducks_dispatch_without_any_subclass_defined():
    """The fast path: no mode and no subclass, ducks found when the op fails on them."""
    code = (
        "import inspect, ember\n"
        "import ember.nn.functional as F\n"
        "from ember._torch_function import ACTIVE\n"
        "from ember.overrides import get_overridable_functions, get_testing_overrides\n"
        "class M:\n"
        "    @classmethod\n"
        "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
        "        return ('m', func)\n"
        "dummies = get_testing_overrides()\n"
        "missed = []\n"
        "for ns in (ember, F, ember.linalg):\n"
        "    for f in get_overridable_functions()[ns]:\n"
        "        ps = inspect.signature(dummies[f]).parameters.values()\n"
        "        req = [p for p in ps if p.default is p.empty and p.kind != p.VAR_KEYWORD]\n"
        "        if not req:\n"
        "            continue\n"
        "        args = [M() for p in req if p.kind != p.KEYWORD_ONLY]\n"
        "        kw = {p.name: M() for p in req if p.kind == p.KEYWORD_ONLY}\n"
        "        try:\n"
        "            ok = f(*args, **kw) == ('m', f)\n"
        "        except Exception:\n"
        "            ok = False\n"
        "        if not ok:\n"
        "            missed.append(f.__name__)\n"
        "assert not ACTIVE[0]\n"
        "print(sorted(missed))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_mode_helpers():
    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    m = Mode()
    with m:
        assert overrides._get_current_function_mode() is m
        assert overrides._get_current_function_mode_stack() == [m]
    assert overrides._get_current_function_mode() is None
    with pytest.raises(NotImplementedError):
        with TorchFunctionMode():
            ember.ones(1)


def test_the_lists_name_what_tensor_holds():
    code = (
        "import ember\n"
        "from ember.overrides import get_overridable_functions, is_tensor_method_or_property\n"
        "listed = get_overridable_functions()[ember.Tensor]\n"
        "assert ember.Tensor.size in listed and is_tensor_method_or_property(ember.Tensor.dim)\n"
        "class S(ember.Tensor):\n"
        "    pass\n"
        "assert ember.Tensor.size in listed\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert out.stdout.strip() == "ok", out.stderr
