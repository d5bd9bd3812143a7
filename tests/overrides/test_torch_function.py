"""The ``__torch_function__`` protocol: duck types, Tensor subclasses, ordering,
NotImplemented, the switches and modes (ember + NumPy only)."""
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._torch_function import ACTIVE
from ember.overrides import TorchFunctionMode
from tests.helpers import check_grad


class Duck:
    """Records every call it is given and answers with a marker."""
    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func, types, args, kwargs))
        return ("duck", func.__name__)


class Refuses:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class Tagged(ember.Tensor):
    pass


class SubTagged(Tagged):
    pass


class Other(ember.Tensor):
    pass


class Logged(ember.Tensor):
    log = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.log.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs)


def tagged(values, cls=Tagged, requires_grad=False):
    return ember.tensor(values, requires_grad=requires_grad).as_subclass(cls)


# ---- duck types ------------------------------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda d, t: ember.mean(d), "mean"),
    (lambda d, t: ember.add(t, d), "add"),
    (lambda d, t: ember.add(t, other=d), "add"),
    (lambda d, t: ember.cat([t, d]), "cat"),
    (lambda d, t: ember.stack((t, d)), "stack"),
    (lambda d, t: F.relu(d), "relu"),
    (lambda d, t: F.linear(t, d), "linear"),
    (lambda d, t: ember.linalg.det(d), "det"),
    (lambda d, t: ember.zeros_like(d), "zeros_like"),
    (lambda d, t: t * d, "mul"),
    (lambda d, t: t.add(d), "add"),
    (lambda d, t: t.expand_as(d), "expand_as"),
    (lambda d, t: t.copy_(d), "copy_"),
    (lambda d, t: t.where(t > 0, d), "where"),
])
def test_a_duck_type_anywhere_in_the_arguments_dispatches(call, name):
    Duck.calls.clear()
    d, t = Duck(), ember.ones(2)
    assert call(d, t) == ("duck", name)
    (func, types, args, kwargs), = Duck.calls
    assert types == (Duck,)
    assert d in args or d in (kwargs or {}).values() or any(
        isinstance(a, (list, tuple)) and d in a for a in args)


def test_the_override_gets_the_arguments_as_passed():
    Duck.calls.clear()
    d, t = Duck(), ember.ones(2)
    ember.add(t, d, alpha=2)
    func, types, args, kwargs = Duck.calls[0]
    assert func is ember.add and args == (t, d) and kwargs == {"alpha": 2}
    t.add(d)
    assert Duck.calls[1][0] is ember.Tensor.add and Duck.calls[1][3] is None


def test_functions_methods_and_aliases_are_reported_as_themselves():
    Duck.calls.clear()
    d, t = Duck(), ember.ones(2)
    ember.relu(d), F.relu(d), t.mul(d), t * d
    reported = [c[0] for c in Duck.calls]
    assert reported == [ember.relu, F.relu, ember.Tensor.mul, ember.Tensor.mul]
    assert F.relu is not ember.relu


def test_all_handlers_returning_notimplemented_is_a_typeerror():
    with pytest.raises(TypeError) as e:
        ember.mean(Refuses())
    assert str(e.value) == (
        "Multiple dispatch failed for 'torch.mean'; all __torch_function__ handlers returned "
        "NotImplemented:\n\n  - tensor subclass " + repr(Refuses) + "\n\nFor more "
        "information, try re-running with TORCH_LOGS=not_implemented")
    with pytest.raises(TypeError, match=r"no implementation found for "
                                        r"'torch.nn.functional.relu' on types that implement "
                                        r"__torch_function__: \[<class"):
        F.relu(Refuses())


def test_an_operator_nobody_handles_falls_back_to_python_typeerror():
    with pytest.raises(TypeError, match="unsupported operand type.* for \\+: 'Tensor' and "
                                        "'Refuses'"):
        ember.ones(2) + Refuses()


def test_ducks_without_ember_code_failing_still_dispatch_once_active():
    # With a subclass defined (this module does), every argument is checked up front.
    assert ACTIVE[0]
    Duck.calls.clear()
    assert ember.is_tensor(Duck()) is False  # not overridable: PyTorch ignores it too
    assert Duck.calls == []


# ---- ordering --------------------------------------------------------------------------------
def _recorder(name, answer, log):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        log.append(name)
        return answer
    return __torch_function__


def test_subclasses_come_before_superclasses_then_left_to_right():
    log = []
    Base = type("Base", (), {"__torch_function__": _recorder("Base", NotImplemented, log)})
    Sub = type("Sub", (Base,), {"__torch_function__": _recorder("Sub", NotImplemented, log)})
    Right = type("Right", (), {"__torch_function__": _recorder("Right", "right", log)})
    with pytest.raises(TypeError):
        ember.cat([Base(), Sub(), Base()])
    assert log == ["Sub", "Base"]  # each type once, the subclass first
    log.clear()
    assert ember.cat([Base(), Right()]) == "right"
    assert log == ["Base", "Right"]


def test_types_lists_each_overloaded_type_in_dispatch_order():
    seen = []

    class A:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(types)
            return NotImplemented

    class B(A):
        pass
    with pytest.raises(TypeError):
        ember.stack([A(), B(), ember.ones(1)])
    assert seen == [(B, A), (B, A)]  # B's handler (inherited) runs first, then A's


# ---- Tensor subclasses -----------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda x: x + 1, lambda x: 1 + x, lambda x: x * x, lambda x: -x, lambda x: x.exp(),
    lambda x: ember.exp(x), lambda x: x.sum(), lambda x: x[0], lambda x: x.T,
    lambda x: x.view(2), lambda x: x.clone(), lambda x: x.detach(), lambda x: F.relu(x),
    lambda x: ember.add(ember.ones(2), x), lambda x: x.to(ember.float64),
    lambda x: ember.cat([ember.ones(2), x]), lambda x: x.unsqueeze(0).expand(3, 2),
])
def test_ops_on_a_subclass_return_the_subclass(call):
    assert type(call(tagged([1.0, 2.0]))) is Tagged


def test_tuples_and_named_tuples_are_converted():
    x = tagged([[1.0, 3.0], [2.0, 0.0]])
    values, indices = ember.max(x, 1)
    assert type(values) is Tagged and type(indices) is Tagged
    assert type(ember.max(x, 1)).__name__ == "max"
    assert all(type(p) is Tagged for p in x.unbind(0))


def test_non_tensor_results_are_left_alone():
    x = tagged([1.0, 2.0])
    assert type(x.shape) is ember.Size and x.dtype is ember.float32
    assert x.tolist() == [1.0, 2.0] and len(x) == 2 and x.dim() == 1


def test_the_most_derived_subclass_wins():
    a, s = tagged([1.0]), tagged([2.0], SubTagged)
    assert type(a + s) is SubTagged and type(s + a) is SubTagged
    assert type(ember.add(a, s)) is SubTagged


def test_unrelated_subclasses_raise_typeerror():
    a, b = tagged([1.0]), tagged([1.0], Other)
    with pytest.raises(TypeError, match="unsupported operand type.* for \\+: 'Tagged' and "
                                        "'Other'"):
        a + b
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.add'"):
        ember.add(a, b)


def test_as_subclass_is_an_alias_in_the_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.as_subclass(Tagged)
    assert y.grad_fn.name() == "AliasBackward0" and y.requires_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert type(x.grad) is ember.Tensor
    with ember.no_grad():
        y.add_(1)
    assert x.tolist() == [2.0, 3.0]  # shared memory


def test_gradients_flow_through_subclass_ops():
    check_grad(lambda a: (a.as_subclass(Tagged).exp() * 2).sin(),
               np.array([0.3, -0.7, 1.1]))


def test_a_logging_subclass_sees_each_public_call_once():
    Logged.log.clear()
    x = tagged([1.0, 2.0], Logged)
    Logged.log.clear()
    y = F.softmax(x * 2, 0).sum()
    assert type(y) is Logged
    assert Logged.log == ["mul", "softmax", "sum"]  # not what those run inside


def test_parameters_opt_out():
    p = ember.nn.Parameter(ember.ones(2))
    assert type(p * 2) is ember.Tensor and type(p.detach()) is ember.Tensor
    assert ember.nn.Parameter.__torch_function__ is ember._C._disabled_torch_function_impl


def test_subclass_repr_names_the_class():
    assert repr(tagged([1.0, 2.0])) == "Tagged([1., 2.])"
    assert repr(ember.nn.Parameter(ember.ones(1))) == \
        "Parameter containing:\ntensor([1.], requires_grad=True)"


def test_an_overriding_subclass_handles_some_functions():
    class Half(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is ember.mean:
                return "mean of half"
            return super().__torch_function__(func, types, args, kwargs)
    h = tagged([2.0], Half)
    assert ember.mean(h) == "mean of half" and type(h + 1) is Half


# ---- switches --------------------------------------------------------------------------------
def test_disable_subclass_dispatch():
    x = tagged([1.0])
    with ember._C.DisableTorchFunctionSubclass():
        assert type(x + 1) is ember.Tensor
        assert not ember._C._is_torch_function_enabled()
        with pytest.raises(AttributeError):
            ember.mean(Duck())  # ducks are not consulted either
    assert ember._C._is_torch_function_enabled()
    assert type(x + 1) is Tagged


def test_disable_torch_function_turns_modes_off_too():
    calls = []

    class Count(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            calls.append(func)
            return func(*args, **(kwargs or {}))
    with Count():
        with ember._C.DisableTorchFunction():
            ember.ones(1) + 1
        assert calls == []
        with ember._C.DisableTorchFunctionSubclass():
            ember.ones(1) + 1  # modes still run
    assert len(calls) == 2


# ---- modes -----------------------------------------------------------------------------------
class Recording(TorchFunctionMode):
    def __init__(self, name="m", log=None):
        super().__init__()
        self.name, self.log = name, [] if log is None else log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, func.__name__))
        return func(*args, **(kwargs or {}))


def test_a_mode_sees_every_public_call_and_not_what_runs_inside():
    with Recording() as m:
        x = ember.zeros(2)
        y = ember.tensor([1.0, 2.0])
        z = (x + y).exp()
        z.shape, z.sum(), F.relu(z), len(z), ember.linalg.vector_norm(z)
    assert [n for _, n in m.log] == ["zeros", "tensor", "add", "exp", "__get__", "sum",
                                     "relu", "__len__", "vector_norm"]


def test_modes_nest_innermost_first_and_pop_while_running():
    log = []
    with Recording("outer", log), Recording("inner", log):
        ember.ones(1).neg()
    assert log == [("inner", "ones"), ("outer", "ones"), ("inner", "neg"), ("outer", "neg")]
    assert ember.overrides._get_current_function_mode() is None


def test_a_mode_can_replace_the_result():
    class Constant(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return 7
    x = ember.ones(1)
    with Constant():
        assert ember.add(x, 1) == 7 and x.sum() == 7 and ember.ones(3) == 7
    assert x.sum().item() == 1


def test_a_mode_returning_notimplemented_with_nothing_else_raises():
    class Refusing(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented
    x = ember.ones(1)
    with Refusing(), pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.neg'"):
        ember.neg(x)


def test_modes_see_subclass_types_and_run_before_them():
    x = tagged([1.0])
    with Recording() as m:
        seen = []

        class Peek(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(types)
                return func(*args, **(kwargs or {}))
        with Peek():
            r = x + 1
    assert seen == [(Tagged,)] and type(r) is Tagged and m.log


def test_mode_exit_on_error_pops_it():
    with pytest.raises(ValueError):
        with Recording():
            raise ValueError
    assert ember.overrides._len_torch_function_stack() == 0


# ---- the fast path -----------------------------------------------------------------------------
def test_nothing_dispatches_until_a_mode_or_subclass_exists():
    code = (
        "import ember\n"
        "from ember._torch_function import ACTIVE\n"
        "size = ember.Tensor.__dict__['size']\n"
        "x = ember.ones(2, requires_grad=True)\n"
        "(x * 2 + 1).tanh().sum().backward()\n"
        "assert not ACTIVE[0]\n"
        "assert not hasattr(size, '__ember_impl__')  # Tensor's own members unwrapped\n"
        "class S(ember.Tensor):\n"
        "    pass\n"
        "assert ACTIVE[0] and hasattr(ember.Tensor.__dict__['size'], '__ember_impl__')\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert out.stdout.strip() == "ok", out.stderr
