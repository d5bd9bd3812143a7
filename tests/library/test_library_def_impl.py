"""Library.define/impl, the functional define/impl, ember.ops resolution, and
register_autograd on an operator made by Library.define."""
import warnings

import numpy as np
import pytest

import ember
from ember.library import Library
from tests.helpers import check_grad


def test_define_impl_call(ns, make_lib):
    lib = make_lib(ns, "DEF")
    assert lib.define("muladd(Tensor a, Tensor b, float c) -> Tensor") == "muladd"
    lib.impl("muladd", lambda a, b, c: a * b + c, "CPU")
    packet = getattr(ember.ops, ns).muladd
    a, b = ember.tensor([1., 2.]), ember.tensor([3., 4.])
    np.testing.assert_allclose(packet(a, b, 0.5).numpy(), [3.5, 8.5])
    np.testing.assert_allclose(packet.default(a, b, c=1.0).numpy(), [4., 9.])
    assert packet.overloads() == ["default"]
    assert str(packet.default._schema) == f"{ns}::muladd(Tensor a, Tensor b, float c) -> Tensor"
    assert repr(packet) == f"<OpOverloadPacket(op='{ns}.muladd')>"
    assert repr(packet.default) == f"<OpOverload(op='{ns}.muladd', overload='default')>"


def test_impl_library_with_dispatch_key(ns, make_lib):
    make_lib(ns, "DEF").define("inc(Tensor x) -> Tensor")
    make_lib(ns, "IMPL", "CPU").impl("inc", lambda x: ember.from_numpy(x.numpy() + 1))
    np.testing.assert_allclose(getattr(ember.ops, ns).inc(ember.zeros(2)).numpy(), [1., 1.])


def test_overloads(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("f.scaled(Tensor x, float s) -> Tensor")
    lib.impl("f", lambda x: x + 1, "CPU")
    lib.impl("f.scaled", lambda x, s: x * s, "CPU")
    f = getattr(ember.ops, ns).f
    assert sorted(f.overloads()) == ["default", "scaled"]
    np.testing.assert_allclose(f.scaled(ember.ones(1), 3.0).numpy(), [3.])
    np.testing.assert_allclose(f(ember.ones(1), 3.0).numpy(), [3.])  # picked by arguments
    np.testing.assert_allclose(f(ember.ones(1)).numpy(), [2.])


def test_register_autograd_on_defined_op(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("numpy_mul(Tensor a, Tensor b) -> Tensor")
    lib.impl("numpy_mul", lambda a, b: ember.from_numpy(a.numpy() * b.numpy()), "CPU")

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a

    ember.library.register_autograd(f"{ns}::numpy_mul", backward, setup_context=setup_context)
    op = getattr(ember.ops, ns).numpy_mul
    check_grad(lambda a, b: op(a, b), np.random.default_rng(0).standard_normal((2, 3)),
               np.random.default_rng(1).standard_normal((2, 3)))
    a = ember.tensor([2.], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: op(x, x), (a,))
    assert type(op(a, a).grad_fn).__name__ == f"GeneratedBackwardFor_{ns}_numpy_mul_defaultBackward"


def test_functional_define_impl(ns):
    ember.library.define(f"{ns}::neg", "(Tensor x) -> Tensor")
    ember.library.impl(f"{ns}::neg", "cpu", lambda x: -x)
    np.testing.assert_allclose(getattr(ember.ops, ns).neg(ember.ones(1)).numpy(), [-1.])

    @ember.library.impl(f"{ns}::neg", "default")
    def _(x):
        return x * 0
    # the CPU kernel comes first, as in PyTorch's dispatch order
    np.testing.assert_allclose(getattr(ember.ops, ns).neg(ember.ones(1)).numpy(), [-1.])


def test_composite_kernel_records_graph(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("square(Tensor x) -> Tensor")
    lib.impl("square", lambda x: x * x, "CompositeImplicitAutograd")
    check_grad(lambda x: getattr(ember.ops, ns).square(x), np.array([1., -2., 3.]))


def test_destroy_removes_definitions(ns):
    lib = Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    lib._destroy()
    with pytest.raises(AttributeError, match=f"'_OpNamespace' '{ns}' object has no attribute 'f'"):
        getattr(ember.ops, ns).f
    with pytest.raises(AssertionError, match="Library object has been destroyed"):
        lib.define("g(Tensor x) -> Tensor")
    Library(ns, "DEF")._destroy()  # the namespace is free again


def test_library_errors(ns, make_lib):
    lib = make_lib(ns, "DEF")
    with pytest.raises(ValueError, match="Unsupported kind: XYZ"):
        Library(ns, "XYZ")
    with pytest.raises(RuntimeError, match=f"Only a single TORCH_LIBRARY can be used to register "
                                           f"the namespace {ns}"):
        Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="with the same name and overload name multiple times"):
        lib.define("f(Tensor y) -> Tensor")
    with pytest.raises(RuntimeError, match=r"Explicitly provided namespace \(other\)"):
        lib.define("other::g(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="could not parse dispatch key: BadKey"):
        lib.impl("f", lambda x: x, "BadKey")
    with pytest.raises(RuntimeError, match="Cannot define an operator inside of a "
                                           "TORCH_LIBRARY_IMPL block"):
        make_lib(ns, "IMPL").define("h(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match=f"Could not run '{ns}::f' with arguments "
                                                  "from the 'CPU' backend"):
        getattr(ember.ops, ns).f(ember.ones(1))
    assert repr(lib) == f"Library(kind=DEF, ns={ns}, dispatch_key=)>"


def test_override_warns_once(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    ember.library._library._override_warned[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.impl("f", lambda x: x + 1, "CPU")
    assert any("Overriding a previously registered kernel" in str(w.message) for w in caught)
    np.testing.assert_allclose(getattr(ember.ops, ns).f(ember.zeros(1)).numpy(), [1.])


def test_ops_namespace_resolution(ns):
    assert repr(getattr(ember.ops, ns)) == f"<module 'ember.ops.{ns}' from 'ember.ops'>"
    with pytest.raises(AttributeError):
        ember.ops.__wrapped__


def test_autograd_kernel_calls_below_itself(ns, make_lib):
    """A kernel at the Autograd key that calls the op again reaches the backend kernel."""
    lib = make_lib(ns, "DEF")
    lib.define("numpy_exp(Tensor x) -> Tensor")
    lib.impl("numpy_exp", lambda x: ember.from_numpy(np.exp(x.numpy())), "CPU")

    class NumpyExp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = getattr(ember.ops, ns).numpy_exp(x)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            out, = ctx.saved_tensors
            return grad * out

    lib.impl("numpy_exp", NumpyExp.apply, "Autograd")
    check_grad(lambda x: getattr(ember.ops, ns).numpy_exp(x), np.array([0.5, -1.]))


def test_vmap_of_numpy_kernel_runs_per_sample(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("numpy_square(Tensor x) -> Tensor")
    lib.impl("numpy_square", lambda x: ember.from_numpy(x.numpy() ** 2), "CPU")
    x = np.arange(6.).reshape(3, 2)
    with pytest.warns(UserWarning, match="batching rule"):
        out = ember.func.vmap(getattr(ember.ops, ns).numpy_square)(ember.tensor(x))
    np.testing.assert_allclose(out.numpy(), x ** 2)


def test_extras(ns, make_lib):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x + 1, "CPU")
    kernel = ember.library.get_kernel(f"{ns}::f", "CPU")
    np.testing.assert_allclose(kernel.call_boxed(None, ember.zeros(1)).numpy(), [1.])
    with pytest.raises(RuntimeError, match=f"no kernel for CUDA for {ns}::f"):
        ember.library.get_kernel(f"{ns}::f", "CUDA")
    with pytest.warns(FutureWarning, match="`torch.library.impl_abstract` was renamed"):
        ember.library.impl_abstract(f"{ns}::f", lambda x: ember.empty_like(x))
    assert ember.library.opcheck(getattr(ember.ops, ns).f, (ember.ones(1),),
                                 test_utils="test_faketensor") == {"test_faketensor": "SUCCESS"}
    with ember.library._scoped_library(ns, "FRAGMENT") as scoped:
        scoped.define("g(Tensor x) -> Tensor")
        assert getattr(ember.ops, ns).g.overloads() == ["default"]
    assert not hasattr(getattr(ember.ops, ns), "g")
    with pytest.raises(NotImplementedError, match="Triton"):
        ember.library.triton_op(f"{ns}::t", lambda x: x, mutates_args=())
