"""opcheck: each test's success and its failures with PyTorch's messages."""
import warnings

import numpy as np
import pytest

import ember
from ember import Tensor
from ember.library import OpCheckError, custom_op, opcheck

ALL_SUCCESS = {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
               "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}


def _failure(op, args, **kwargs):
    with pytest.raises(OpCheckError) as info:
        opcheck(op, args, **kwargs)
    return str(info.value)


def test_undeclared_mutation(ns):
    @custom_op(f"{ns}::sneaky", mutates_args=())
    def sneaky(x: Tensor) -> Tensor:
        x.numpy()[...] += 1  # writes its input without declaring it
        return x.clone()

    assert _failure(sneaky, (ember.randn(3),)) == (
        "opcheck(op, ...): test_schema failed with Argument x is not defined as mutable but was "
        "mutated (scroll up for stack trace)")

    @custom_op(f"{ns}::declared", mutates_args=["x"])
    def declared(x: Tensor) -> None:
        x.numpy()[...] += 1

    assert opcheck(declared, (ember.randn(3),)) == ALL_SUCCESS


def test_fake_impl_checks(ns):
    @custom_op(f"{ns}::nofake", mutates_args=())
    def nofake(x: Tensor) -> Tensor:
        return x.sin()

    assert _failure(nofake, (ember.randn(3),)) == (
        f"opcheck(op, ...): test_faketensor failed with There was no fake impl registered for "
        f"<CustomOpDef({ns}::nofake)>. This is necessary for torch.compile/export/fx tracing to "
        "work. Please use `nofake.register_fake` to add an fake impl. (scroll up for stack trace)")
    nofake.register_fake(lambda x: x.new_empty(x.shape[0] + 1))
    assert _failure(nofake, (ember.randn(3),)) == (
        f"opcheck(op, ...): test_faketensor failed with When comparing the output of "
        f"{ns}.nofake.default on FakeTensor and concrete Tensors, found mismatched tensor "
        "metadata: Shapes ember.Size([3]) and ember.Size([4]) are not equal! (scroll up for "
        "stack trace)")
    nofake.register_fake(lambda x: x.new_empty(x.shape, dtype=ember.float64))
    assert "Dtypes ember.float32 and ember.float64 are not equal!" in \
        _failure(nofake, (ember.randn(3),))

    @custom_op(f"{ns}::two", mutates_args=())
    def two(x: Tensor) -> tuple[Tensor, Tensor]:
        return x.sin(), x.cos()

    two.register_fake(lambda x: (ember.empty_like(x),))
    assert "found mismatch in number of returns 1 != 2" in _failure(two, (ember.randn(2, 3),))
    two.register_fake(lambda x: (ember.empty_like(x), ember.empty_like(x).t()))
    assert "found mismatched tensor metadata for output[1]: Shapes ember.Size([2, 3]) and " \
           "ember.Size([3, 2]) are not equal!" in _failure(two, (ember.randn(2, 3),))


def test_missing_autograd_formula_fails_the_dispatch_test(ns):
    @custom_op(f"{ns}::noformula", mutates_args=())
    def noformula(x: Tensor) -> Tensor:
        return x.sin()

    noformula.register_fake(lambda x: ember.empty_like(x))
    assert _failure(noformula, (ember.randn(3, requires_grad=True),)) == (
        f"opcheck(op, ...): test_aot_dispatch_dynamic failed with Trying to backward through "
        f"{ns}.noformula.default but no autograd formula was registered. Please use "
        "register_autograd to add one. (scroll up for stack trace)")


def test_library_ops(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("viewer(Tensor x) -> Tensor")
    lib.impl("viewer", lambda x: x.view(-1), "CPU")
    lib.impl("viewer", lambda x: x.view(-1), "Meta")
    ops = getattr(ember.ops, ns)
    assert "test_schema failed with Argument x is not defined to alias output but was aliasing" \
        in _failure(ops.viewer.default, (ember.randn(3),))
    lib.define("traced(Tensor x) -> Tensor")
    lib.impl("traced", lambda x: x.sin(), "CPU")
    assert f"test_autograd_registration failed with {ns}::traced: at least one output of this " \
           "operator has requires_grad=True but the operator does not have an autograd kernel" \
        in _failure(ops.traced.default, (ember.randn(3, requires_grad=True),),
                    test_utils="test_autograd_registration")
    lib.define("composite(Tensor x) -> Tensor")
    lib.impl("composite", lambda x: x.sin(), "CompositeImplicitAutograd")
    assert opcheck(ops.composite, (ember.randn(3, requires_grad=True),)) == ALL_SUCCESS
    lib.define("numpy_only(Tensor x) -> Tensor")
    lib.impl("numpy_only", lambda x: ember.from_numpy(np.sin(x.detach().numpy())), "CPU")
    result = opcheck(ops.numpy_only.default, (ember.randn(3, requires_grad=True),),
                     raise_exception=False)
    assert result["test_schema"] == result["test_autograd_registration"] == "SUCCESS"
    assert type(result["test_faketensor"]).__name__ == "UnsupportedOperatorException"
    assert str(result["test_faketensor"]) == f"{ns}.numpy_only.default"


def test_arguments_checked(ns):
    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x + 1

    f.register_fake(lambda x: ember.empty_like(x))
    with pytest.raises(ValueError, match=r"opcheck\(op, ..., test_utils=\('bogus',\)\), expected "
                                         "test_utils to be subset of"):
        opcheck(f, (ember.ones(1),), test_utils="bogus")
    with pytest.raises(ValueError, match="op must be instance of"):
        opcheck(lambda x: x, (ember.ones(1),))
    assert opcheck(f, (ember.ones(1),), test_utils=("test_schema", "test_aot_dispatch_static")) \
        == {"test_schema": "SUCCESS", "test_aot_dispatch_static": "SUCCESS"}


def test_meta_kernel_serves_as_fake(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("double(Tensor x) -> Tensor", tags=("pt2_compliant_tag",))
    lib.impl("double", lambda x: ember.from_numpy(x.numpy() * 2), "CPU")
    lib.impl("double", lambda x: x.new_empty(x.shape), "Meta")
    op = getattr(ember.ops, ns).double.default
    assert op.tags == ["pt2_compliant_tag"]
    assert opcheck(op, (ember.ones(2),)) == ALL_SUCCESS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overriding a kernel warns (once per process)
        lib.impl("double", lambda x: x.new_empty(3), "Meta")
    assert "Shapes ember.Size([2]) and ember.Size([3]) are not equal!" in \
        _failure(op, (ember.ones(2),))
