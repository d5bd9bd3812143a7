"""custom_op: schemas from type hints, registrations on the op, autograd, mutation."""
import typing

import numpy as np
import pytest

import ember
from ember import Tensor
from ember.library import custom_op, infer_schema
from tests.helpers import check_grad, check_second_grad


def _numpy_sin(ns):
    @custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:
        return ember.from_numpy(np.sin(x.numpy()))

    @numpy_sin.register_fake
    def _(x):
        return ember.empty_like(x)

    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos()

    numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


def test_numpy_sin_is_differentiable_twice(ns):
    numpy_sin = _numpy_sin(ns)
    x = np.random.default_rng(0).standard_normal((3, 4))
    np.testing.assert_allclose(numpy_sin(ember.tensor(x)).numpy(), np.sin(x))
    check_grad(numpy_sin, x)
    check_second_grad(numpy_sin, x)
    t = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradcheck(numpy_sin, (t,))
    assert ember.autograd.gradgradcheck(numpy_sin, (t,))
    op = getattr(ember.ops, ns).numpy_sin
    assert repr(numpy_sin) == f"<CustomOpDef({ns}::numpy_sin)>"
    assert str(op.default._schema) == f"{ns}::numpy_sin(Tensor x) -> Tensor"
    np.testing.assert_allclose(op.default(ember.tensor(x)).numpy(), np.sin(x))


def test_backward_without_formula_raises(ns):
    @custom_op(f"{ns}::plain", mutates_args=())
    def plain(x: Tensor) -> Tensor:
        return ember.from_numpy(np.sin(x.numpy()))

    y = plain(ember.ones(2, requires_grad=True))
    assert y.requires_grad
    assert type(y.grad_fn).__name__ == f"GeneratedBackwardFor_{ns}_plain_defaultBackward"
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value) == (f"Trying to backward through {ns}.plain.default but no autograd "
                               "formula was registered. Please use register_autograd to add one.")


def test_keyword_only_inputs_reach_setup_context(ns):
    @custom_op(f"{ns}::scale", mutates_args=())
    def scale(x: Tensor, *, s: float = 2.0) -> Tensor:
        return ember.from_numpy(x.numpy() * s)

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.s = keyword_only_inputs["s"]

    scale.register_autograd(lambda ctx, grad: grad * ctx.s, setup_context=setup_context)
    check_grad(lambda x: scale(x, s=3.0), np.array([1., 2.]))
    check_grad(scale, np.array([1., 2.]))


def test_tensor_list_inputs_and_outputs(ns):
    @custom_op(f"{ns}::wsum", mutates_args=())
    def wsum(xs: list[Tensor], w: float) -> Tensor:
        return ember.from_numpy(sum(x.numpy() for x in xs) * w)

    def setup_context(ctx, inputs, output):
        ctx.w, ctx.n = inputs[1], len(inputs[0])

    def backward(ctx, grad):
        assert len(ctx.needs_input_grad) == 2 and len(ctx.needs_input_grad[0]) == ctx.n
        return [grad * ctx.w] * ctx.n, None

    wsum.register_autograd(backward, setup_context=setup_context)
    a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    wsum([a, b], 3.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3., 3.])
    np.testing.assert_allclose(b.grad.numpy(), [3., 3.])

    @custom_op(f"{ns}::halves", mutates_args=())
    def halves(x: Tensor) -> list[Tensor]:
        return [x * 0.5, x * 1.5]

    halves.register_autograd(lambda ctx, grads: grads[0] * 0.5 + grads[1] * 1.5)
    out = halves(ember.ones(2))
    assert isinstance(out, list) and len(out) == 2
    check_grad(lambda x: halves(x)[0] + halves(x)[1], np.array([1., 2.]))


def test_wrong_number_of_gradients(ns):
    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor, y: Tensor) -> Tensor:
        return x + y

    f.register_autograd(lambda ctx, grad: grad)
    a = ember.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients "
                                           r"\(expected 3, got 2\)"):
        f(a, a).backward()


def test_mutation_bumps_version_and_skips_autograd(ns):
    @custom_op(f"{ns}::sin_", mutates_args=["x"])
    def sin_(x: Tensor) -> None:
        data = x.numpy()
        np.sin(data, out=data)

    t = ember.tensor([0.5, 1.0])
    assert sin_(t) is None
    assert t._version == 1
    np.testing.assert_allclose(t.numpy(), np.sin([0.5, 1.0]))
    assert str(getattr(ember.ops, ns).sin_.default._schema) == f"{ns}::sin_(Tensor(a0!) x) -> ()"
    with pytest.raises(RuntimeError, match="Cannot register autograd formula for non-functional "
                                           f"operator <CustomOpDef\\({ns}::sin_\\)> with schema"):
        sin_.register_autograd(lambda ctx, grad: grad)


def test_returning_an_input_raises(ns):
    @custom_op(f"{ns}::ident", mutates_args=())
    def ident(x: Tensor) -> Tensor:
        return x

    with pytest.raises(RuntimeError, match="ident \\(with implementation in .*The output of this "
                                           "custom operator \\(1\\) must not also be an input"):
        ident(ember.ones(1))


def test_register_kernel_and_set_kernel_enabled(ns):
    @custom_op(f"{ns}::which", mutates_args=())
    def which(x: Tensor) -> Tensor:
        return x * 0

    @which.register_kernel("cpu")
    def _(x):
        return x * 0 + 1

    np.testing.assert_allclose(which(ember.ones(1)).numpy(), [1.])
    with which.set_kernel_enabled("cpu", enabled=False):
        np.testing.assert_allclose(which(ember.ones(1)).numpy(), [0.])
    np.testing.assert_allclose(which(ember.ones(1)).numpy(), [1.])

    @custom_op(f"{ns}::cpu_only", mutates_args=(), device_types="cpu")
    def cpu_only(x: Tensor) -> Tensor:
        return x + 1
    np.testing.assert_allclose(cpu_only(ember.ones(1)).numpy(), [2.])


def test_functional_registrations_by_name(ns):
    @custom_op(f"{ns}::cube", mutates_args=())
    def cube(x: Tensor) -> Tensor:
        return ember.from_numpy(x.numpy() ** 3)

    ember.library.register_autograd(f"{ns}::cube", lambda ctx, g: g * 3 * ctx.x ** 2,
                                    setup_context=lambda ctx, inputs, output:
                                    setattr(ctx, "x", inputs[0]))
    ember.library.register_fake(f"{ns}::cube", lambda x: ember.empty_like(x))
    check_grad(cube, np.array([1., -2.]))
    assert ember.library.opcheck(cube, (ember.ones(2, requires_grad=True),)) == {
        "test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
        "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}


def test_redefining_replaces(ns):
    custom_op(f"{ns}::f", lambda x: x + 1, mutates_args=(), schema="(Tensor x) -> Tensor")
    second = custom_op(f"{ns}::f", lambda x: x + 2, mutates_args=(), schema="(Tensor x) -> Tensor")
    np.testing.assert_allclose(second(ember.zeros(1)).numpy(), [2.])


def test_infer_schema():
    def f(x: Tensor, n: int = 3, s: float = 2.0, b: bool = True, st: str = "hi",
          o: typing.Optional[Tensor] = None, sq: typing.Sequence[Tensor] = None,
          d: ember.dtype = ember.float32, sc: typing.Union[int, float, bool] = 2, *,
          k: typing.Optional[typing.List[int]] = None) -> typing.Tuple[Tensor, int, float]:
        ...
    assert infer_schema(f, mutates_args=()) == (
        '(Tensor x, SymInt n=3, float s=2.0, bool b=True, str st="hi", Tensor? o=None, '
        "Tensor[] sq=None, ScalarType d=float32, Scalar sc=2, *, SymInt[]? k=None) -> "
        "(Tensor, SymInt, float)")

    def g(x: Tensor, y: typing.Optional[Tensor], z: typing.List[Tensor], w: int) -> None:
        ...
    assert infer_schema(g, mutates_args="unknown") == \
        "(Tensor(a0!) x, Tensor(a1!)? y, Tensor(a2!)[] z, SymInt w) -> ()"
    assert infer_schema(g, mutates_args={"z"}, op_name="g") == \
        "g(Tensor x, Tensor? y, Tensor(a2!)[] z, SymInt w) -> ()"


def _bad(x: Tensor, y: dict) -> Tensor:
    ...


def _no_hint(x):
    ...


def _varargs(x: Tensor, *args) -> Tensor:
    ...


def _no_return(x: Tensor):
    ...


def _bad_default(x: Tensor, l: typing.List[int] = (1, 2)) -> Tensor:  # noqa: E741
    ...


def _bad_return(x: Tensor) -> dict:
    ...


@pytest.mark.parametrize("fn, mutates, message", [
    (_no_hint, (), "infer_schema(func): Parameter x must have a type annotation. Got func with "
                   "signature (x))"),
    (_bad, (), "infer_schema(func): Parameter y has unsupported type <class 'dict'>. The valid "
               "types are: dict_keys(["),
    (_varargs, (), "infer_schema(func): We do not support positional-only args, varargs, or "
                   "varkwargs. Got func with signature"),
    (_no_return, (), "infer_schema(func): No return type annotation was provided. Please add "
                     "one. Got func with signature"),
    (_bad_default, (), "infer_schema(func): Parameter l has an unsupported default value type "
                       "<class 'tuple'>. Please file an issue on GitHub so we can prioritize "
                       "this."),
    (_bad_return, (), "infer_schema(func): Return has unsupported type <class 'dict'>. The valid "
                      "types are: {"),
    (_bad_return, ("y",), "infer_schema(func): {'y'} in mutates_args were not found in the custom "
                          "op's signature. mutates_args should contain the names of all args "
                          "that the custom op mutates, or just the string 'unknown' if you "
                          "don't know."),
    (_bad_return, "x", "mutates_args must either be a sequence of the names of the arguments "
                       "that are mutated or the string 'unknown'. "),
])
def test_infer_schema_errors(fn, mutates, message):
    with pytest.raises(ValueError) as info:
        infer_schema(fn, mutates_args=mutates)
    assert str(info.value).startswith(message)


def test_custom_op_argument_errors(ns):
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: "
                                        "'mutates_args'"):
        custom_op(f"{ns}::f", lambda x: x)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        custom_op("nonamespace", lambda x: x, mutates_args=(), schema="(Tensor x) -> Tensor")


def test_alias_sets_are_named_by_position():
    def f(x: Tensor, n: int = 2, *, out: Tensor) -> None:
        ...
    assert infer_schema(f, mutates_args={"out"}) == \
        "(Tensor x, SymInt n=2, *, Tensor(a2!) out) -> ()"
