"""Seed 003 (English note, PyTorch 1.1: LinearFunction, MulConstant, gradcheck, a Linear
Module) and seed 004 (the same code with Chinese comments, plus second derivatives with
``t.autograd.grad``), run on ember (see seed_runner.py)."""
import numpy as np
import pytest

import ember

from tests.examples.seed_runner import (EMBER_PRELUDE, TORCH_PRELUDE, needs_torch,
                                        np_linear as _np_linear, run_seed, torch_or_none as _torch)

SEED_003_LINEAR_FUNCTION = '''
# Inherit from Function
class LinearFunction(Function):

    # Note that both forward and backward are @staticmethods
    @staticmethod
    # bias is an optional argument
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    # This function has only a single output, so it gets only one gradient
    @staticmethod
    def backward(ctx, grad_output):
        # This is a pattern that is very convenient - at the top of backward
        # unpack saved_tensors and initialize all gradients w.r.t. inputs to
        # None. Thanks to the fact that additional trailing Nones are
        # ignored, the return statement is simple even when the function has
        # optional inputs.
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # These needs_input_grad checks are optional and there only to
        # improve efficiency. If you want to make your code simpler, you can
        # skip them. Returning gradients for inputs that don't require it is
        # not an error.
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)

        return grad_input, grad_weight, grad_bias
'''

SEED_003_ALIAS = '''
linear = LinearFunction.apply
'''

SEED_003_MUL_CONSTANT = '''
class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx is a context object that can be used to stash information
        # for backward computation
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # We return as many input gradients as there were arguments.
        # Gradients of non-Tensor arguments to forward must be None.
        return grad_output * ctx.constant, None
'''

SEED_003_GRADCHECK = '''
from torch.autograd import gradcheck

# gradcheck takes a tuple of tensors as input, check if your gradient
# evaluated with these tensors are close enough to numerical
# approximations and returns True if they all verify this condition.
input = (torch.randn(20,20,dtype=torch.double,requires_grad=True), torch.randn(30,20,dtype=torch.double,requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)
'''

SEED_003_MODULE = '''
class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super(Linear, self).__init__()
        self.input_features = input_features
        self.output_features = output_features

        # nn.Parameter is a special kind of Tensor, that will get
        # automatically registered as Module's parameter once it's assigned
        # as an attribute. Parameters and buffers need to be registered, or
        # they won't appear in .parameters() (doesn't apply to buffers), and
        # won't be converted when e.g. .cuda() is called. You can use
        # .register_buffer() to register buffers.
        # nn.Parameters require gradients by default.
        self.weight = nn.Parameter(torch.Tensor(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(output_features))
        else:
            # You should always register all possible parameters, but the
            # optional ones can be None if you want.
            self.register_parameter('bias', None)

        # Not a very smart way to initialize weights
        self.weight.data.uniform_(-0.1, 0.1)
        if bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        # See the autograd section for explanation of what happens here.
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        # (Optional)Set the extra information about this module. You can test
        # it by printing an object of this class.
        return 'in_features={}, out_features={}, bias={}'.format(
            self.in_features, self.out_features, self.bias is not None
        )
'''



def test_003_linear_function_gradcheck_prints_true():
    ns, out = run_seed(SEED_003_LINEAR_FUNCTION, SEED_003_ALIAS, SEED_003_GRADCHECK)
    assert out == "True\n"
    assert ns["test"] is True


def test_003_linear_function_values_and_grads():
    ns, _ = run_seed(SEED_003_LINEAR_FUNCTION, SEED_003_ALIAS)
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal(5)
    xt, wt, bt = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    out = ns["linear"](xt, wt, bt)
    np.testing.assert_allclose(out.detach().numpy(), _np_linear(x, w, b), rtol=1e-12)
    assert out.grad_fn.name() == "LinearFunctionBackward"
    g = rng.standard_normal((4, 5))
    out.backward(ember.tensor(g))
    np.testing.assert_allclose(xt.grad.numpy(), g @ w, rtol=1e-12)
    np.testing.assert_allclose(wt.grad.numpy(), g.T @ x, rtol=1e-12)
    np.testing.assert_allclose(bt.grad.numpy(), g.sum(0), rtol=1e-12)


def test_003_linear_function_without_bias_and_partial_needs_input_grad():
    ns, _ = run_seed(SEED_003_LINEAR_FUNCTION, SEED_003_ALIAS)
    x = ember.tensor([[1.0, 2.0]])
    w = ember.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    out = ns["linear"](x, w)                      # bias left out: its default None
    np.testing.assert_allclose(out.detach().numpy(), [[11.0, 17.0]])
    out.sum().backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [[1.0, 2.0], [1.0, 2.0]])


def test_003_gradcheck_with_bias():
    ns, _ = run_seed(SEED_003_LINEAR_FUNCTION, SEED_003_ALIAS)
    gc = ns["gradcheck"]
    inputs = (ember.randn(6, 4, dtype=ember.double, requires_grad=True),
              ember.randn(3, 4, dtype=ember.double, requires_grad=True),
              ember.randn(3, dtype=ember.double, requires_grad=True))
    assert gc(ns["linear"], inputs, eps=1e-6, atol=1e-4) is True


def test_003_mul_constant_forward_backward():
    ns, _ = run_seed(SEED_003_MUL_CONSTANT)
    x = ember.tensor([1.0, -2.0, 3.5], requires_grad=True)
    y = ns["MulConstant"].apply(x, 2.5)
    np.testing.assert_allclose(y.detach().numpy(), [2.5, -5.0, 8.75])
    assert y.grad_fn.name() == "MulConstantBackward"
    y.backward(ember.tensor([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.5, 25.0, 250.0])


def test_003_mul_constant_higher_order():
    # The note: backward written with differentiable ops gives higher-order derivatives.
    ns, _ = run_seed(SEED_003_MUL_CONSTANT)
    x = ember.tensor([1.0, 2.0], dtype=ember.double, requires_grad=True)
    y = ns["MulConstant"].apply(x, 3.0) ** 2          # 9 x^2
    g, = ember.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [18.0, 36.0])
    gg, = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [18.0, 18.0])


def test_003_mul_constant_gradcheck():
    ns, _ = run_seed(SEED_003_MUL_CONSTANT)
    x = ember.randn(3, 4, dtype=ember.double, requires_grad=True)
    assert ember.autograd.gradcheck(ns["MulConstant"].apply, (x, 1.7)) is True


def test_003_mul_constant_gradgradcheck():
    ns, _ = run_seed(SEED_003_MUL_CONSTANT)
    x = ember.randn(3, 4, dtype=ember.double, requires_grad=True)
    assert ember.autograd.gradgradcheck(ns["MulConstant"].apply, (x, 1.7)) is True


@needs_torch
def test_003_same_results_as_torch():
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal(5)
    g = rng.standard_normal((4, 5))
    results = {}
    for lib, mod in (("ember", ember), ("torch", _torch)):
        ns, _ = run_seed(SEED_003_LINEAR_FUNCTION, SEED_003_ALIAS, SEED_003_MUL_CONSTANT,
                         lib=lib)
        xt, wt, bt = (mod.tensor(a, requires_grad=True) for a in (x, w, b))
        out = ns["MulConstant"].apply(ns["linear"](xt, wt, bt), 0.5)
        out.backward(mod.tensor(g))
        results[lib] = [out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(),
                        bt.grad.numpy()]
    for e, t in zip(results["ember"], results["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-12)


# ---- the Linear Module of 003/004 (needs ember.nn) -----------------------------------------
def _module_ns(lib="ember"):
    if lib == "ember":
        pytest.importorskip("ember.nn")
        prelude = EMBER_PRELUDE + "import ember.nn as nn\n"
    else:
        prelude = TORCH_PRELUDE + "import torch.nn as nn\n"
    ns, _ = run_seed(SEED_003_LINEAR_FUNCTION, SEED_003_MODULE, lib=lib, prelude=prelude)
    return ns


def test_003_linear_module_forward():
    ns = _module_ns()
    m = ns["Linear"](3, 2)
    assert tuple(m.weight.shape) == (2, 3) and tuple(m.bias.shape) == (2,)
    assert m.weight.requires_grad and m.bias.requires_grad
    assert float(m.weight.detach().abs().max()) <= 0.1
    x = ember.randn(4, 3)
    out = m(x)
    np.testing.assert_allclose(out.detach().numpy(),
                               _np_linear(x.numpy(), m.weight.detach().numpy(),
                                          m.bias.detach().numpy()), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(m.bias.grad.numpy(), [4.0, 4.0])
    assert [p is q for p, q in zip(m.parameters(), (m.weight, m.bias))] == [True, True]


def test_003_linear_module_repr_raises_like_torch():
    # extra_repr names in_features/out_features, which the module never sets.
    ns = _module_ns()
    m = ns["Linear"](3, 2)
    with pytest.raises(AttributeError, match="^'Linear' object has no attribute 'in_features'$"):
        repr(m)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'in_features'"):
        print(m)


def test_003_linear_module_bias_false_raises_like_torch():
    # `if bias is not None:` with bias=False: self.bias is None, so `.data` fails.
    ns = _module_ns()
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'data'"):
        ns["Linear"](3, 2, bias=False)


@needs_torch
def test_003_linear_module_errors_match_torch():
    pytest.importorskip("ember.nn")
    msgs = {}
    for lib in ("ember", "torch"):
        ns = _module_ns(lib)
        got = []
        with pytest.raises(AttributeError) as e:
            repr(ns["Linear"](3, 2))
        got.append(str(e.value))
        with pytest.raises(AttributeError) as e:
            ns["Linear"](3, 2, bias=False)
        got.append(str(e.value))
        msgs[lib] = got
    assert msgs["ember"] == msgs["torch"]


# --------------------------------------------------------------------------------------------
# seed 004 (blog): LinearFunction/MulConstant as in 003, second derivatives with t.autograd.grad
# --------------------------------------------------------------------------------------------
SEED_004_CALL = '''
#调用自定义的自动求导函数
linear = LinearFunction.apply(*args) #前向传播
linear.backward()#反向传播
linear.grad_fn.apply(*args)#反向传播
'''

SEED_004_SECOND_DERIVATIVE = '''
grad_x =t.autograd.grad(y, x, create_graph=True)
grad_grad_x = t.autograd.grad(grad_x[0],x)
'''

PRELUDE_004_EMBER = EMBER_PRELUDE + "import ember as t\n"
PRELUDE_004_TORCH = TORCH_PRELUDE + "import torch as t\n"


def test_004_second_derivative_verbatim_raises_name_error():
    # x and y are never defined in the post: NameError, as on PyTorch.
    with pytest.raises(NameError, match="name 'y' is not defined"):
        run_seed(SEED_004_SECOND_DERIVATIVE, prelude=PRELUDE_004_EMBER)


@needs_torch
def test_004_second_derivative_verbatim_same_error_as_torch():
    errors = []
    for prelude in (PRELUDE_004_EMBER, PRELUDE_004_TORCH):
        with pytest.raises(NameError) as e:
            run_seed(SEED_004_SECOND_DERIVATIVE, prelude=prelude)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_004_second_derivative_with_x_and_y_defined():
    # y = x^3 at x = 2: dy/dx = 3x^2 = 12, d2y/dx2 = 6x = 12.
    x = ember.tensor(2.0, dtype=ember.double, requires_grad=True)
    ns, _ = run_seed(SEED_004_SECOND_DERIVATIVE, prelude=PRELUDE_004_EMBER,
                     extra={"x": x, "y": x ** 3})
    grad_x, grad_grad_x = ns["grad_x"], ns["grad_grad_x"]
    assert isinstance(grad_x, tuple) and len(grad_x) == 1 and grad_x[0].requires_grad
    assert float(grad_x[0]) == 12.0
    assert isinstance(grad_grad_x, tuple) and float(grad_grad_x[0]) == 12.0


def test_004_second_derivative_through_custom_functions():
    # y = sum(MulConstant(x, 3)^2) = 9 sum(x^2); grad_x = 18x; grad of grad_x[0] (not a
    # scalar) needs grad_outputs, so sum it first via a custom Function of the seed.
    ns, _ = run_seed(SEED_003_MUL_CONSTANT, prelude=PRELUDE_004_EMBER)
    x = ember.tensor(1.5, dtype=ember.double, requires_grad=True)
    y = ns["MulConstant"].apply(x, 3.0) ** 2
    ns, _ = run_seed(SEED_004_SECOND_DERIVATIVE, prelude=PRELUDE_004_EMBER,
                     extra={"x": x, "y": y})
    assert float(ns["grad_x"][0]) == pytest.approx(27.0)
    assert float(ns["grad_grad_x"][0]) == pytest.approx(18.0)


@needs_torch
def test_004_second_derivative_same_as_torch():
    got = {}
    for lib, mod, prelude in (("ember", ember, PRELUDE_004_EMBER),
                              ("torch", _torch, PRELUDE_004_TORCH)):
        ns, _ = run_seed(SEED_003_MUL_CONSTANT, lib=lib)
        x = mod.tensor(0.7, dtype=mod.float64, requires_grad=True)
        y = ns["MulConstant"].apply(x.sin(), -2.0) ** 3      # -8 sin^3 x
        ns, _ = run_seed(SEED_004_SECOND_DERIVATIVE, lib=lib, prelude=prelude,
                         extra={"x": x, "y": y})
        got[lib] = (float(ns["grad_x"][0].detach()), float(ns["grad_grad_x"][0]))
    np.testing.assert_allclose(got["ember"], got["torch"], rtol=1e-12)


def test_004_call_snippet_verbatim_raises_name_error():
    with pytest.raises(NameError, match="name 'args' is not defined"):
        run_seed(SEED_003_LINEAR_FUNCTION, SEED_004_CALL, prelude=PRELUDE_004_EMBER)


def test_004_call_snippet_forward_and_backward_with_args_defined():
    # With a 1x1 (scalar-like) output, `linear.backward()` works as in PyTorch.
    x = ember.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    w = ember.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    ns, _ = run_seed(SEED_003_LINEAR_FUNCTION, "linear = LinearFunction.apply(*args)\n"
                     "linear.backward()\n", extra={"args": (x, w)})
    assert float(ns["linear"]) == pytest.approx(4.5)
    np.testing.assert_allclose(x.grad.numpy(), [[0.5, -1.0, 2.0]])
    np.testing.assert_allclose(w.grad.numpy(), [[1.0, 2.0, 3.0]])


def test_004_grad_fn_apply_calls_backward():
    # Seed 004 calls `linear.grad_fn.apply(...)`; on PyTorch that runs the user's backward
    # with the given grad_outputs and returns its result (args as written there: a
    # TypeError, backward takes one gradient).
    x = ember.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    w = ember.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    ns, _ = run_seed(SEED_003_LINEAR_FUNCTION)
    linear = ns["LinearFunction"].apply(x, w)
    gi, gw, gb = linear.grad_fn.apply(ember.ones(1, 1))
    np.testing.assert_allclose(gi.detach().numpy(), [[0.5, -1.0, 2.0]])
    np.testing.assert_allclose(gw.detach().numpy(), [[1.0, 2.0, 3.0]])
    assert gb is None
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        linear.grad_fn.apply(x, w)


def test_004_module_repr_raises_like_torch():
    # 004 repeats 003's Linear module, extra_repr bug included.
    ns = _module_ns()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'in_features'"):
        repr(ns["Linear"](4, 1))
