"""Seed 000 (PyTorch 0.2/0.3 docs, Chinese): the legacy Function API, a helper, gradcheck
and a Module; seed 002 repeats its first half. Run on ember (see seed_runner.py)."""
import numpy as np
import pytest

import ember

from tests.examples.seed_runner import EMBER_PRELUDE, np_linear as _np_linear, run_seed

SEED_000_LINEAR = '''
# Inherit from Function
class Linear(Function):

    # bias is an optional argument
    def forward(self, input, weight, bias=None):
        self.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    # This function has only a single output, so it gets only one gradient
    def backward(self, grad_output):
        # This is a pattern that is very convenient - at the top of backward
        # unpack saved_tensors and initialize all gradients w.r.t. inputs to
        # None. Thanks to the fact that additional trailing Nones are
        # ignored, the return statement is simple even when the function has
        # optional inputs.
        input, weight, bias = self.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # These needs_input_grad checks are optional and there only to
        # improve efficiency. If you want to make your code simpler, you can
        # skip them. Returning gradients for inputs that don't require it is
        # not an error.
        if self.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if self.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and self.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)

        return grad_input, grad_weight, grad_bias
'''

SEED_000_HELPER = '''
def linear(input, weight, bias=None):
    # First braces create a Function object. Any arguments given here
    # will be passed to __init__. Second braces will invoke the __call__
    # operator, that will then use forward() to compute the result and
    # return it.
    return Linear()(input, weight, bias)
'''

SEED_000_GRADCHECK = '''
from torch.autograd import gradcheck

# gradchek takes a tuple of tensor as input, check if your gradient
# evaluated with these tensors are close enough to numerical
# approximations and returns True if they all verify this condition.
input = (Variable(torch.randn(20,20).double(), requires_grad=True),)
test = gradcheck.gradcheck(Linear(), input, eps=1e-6, atol=1e-4)
print(test)
'''

SEED_000_MODULE = '''
class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        self.input_features = input_features
        self.output_features = output_features

        # nn.Parameter is a special kind of Variable, that will get
        # automatically registered as Module's parameter once it's assigned
        # as an attribute. Parameters and buffers need to be registered, or
        # they won't appear in .parameters() (doesn't apply to buffers), and
        # won't be converted when e.g. .cuda() is called. You can use
        # .register_buffer() to register buffers.
        # nn.Parameters can never be volatile and, different than Variables,
        # they require gradients by default.
        self.weight = nn.Parameter(torch.Tensor(input_features, output_features))
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
        return Linear()(input, self.weight, self.bias)
'''

SEED_002_LINEAR = '''
# Inherit from Function
class Linear(Function):

    # bias is an optional argument
    def forward(self, input, weight, bias=None):
        self.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    # This function has only a single output, so it gets only one gradient
    def backward(self, grad_output):
        # This is a pattern that is very convenient - at the top of backward
        # unpack saved_tensors and initialize all gradients w.r.t. inputs to
        # None. Thanks to the fact that additional trailing Nones are
        # ignored, the return statement is simple even when the function has
        # optional inputs.
        input, weight, bias = self.saved_tensors
'''


def test_000_legacy_linear_called_as_instance():
    ns, _ = run_seed(SEED_000_LINEAR, SEED_000_HELPER)
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((2, 3)), rng.standard_normal(2)
    xt, wt, bt = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    out = ns["Linear"]()(xt, wt, bt)
    np.testing.assert_allclose(out.detach().numpy(), _np_linear(x, w, b), rtol=1e-12)
    assert out.requires_grad and out.grad_fn.name() == "LinearBackward"
    g = rng.standard_normal((4, 2))
    out.backward(ember.tensor(g))
    np.testing.assert_allclose(xt.grad.numpy(), g @ w, rtol=1e-12)
    np.testing.assert_allclose(wt.grad.numpy(), g.T @ x, rtol=1e-12)
    np.testing.assert_allclose(bt.grad.numpy(), g.sum(0), rtol=1e-12)


def test_000_linear_helper_without_bias():
    ns, _ = run_seed(SEED_000_LINEAR, SEED_000_HELPER)
    x = ember.tensor([[1.0, 2.0]], requires_grad=True)
    w = ember.tensor([[3.0, 4.0], [5.0, 6.0]])
    out = ns["linear"](x, w)          # Linear()(input, weight, None)
    np.testing.assert_allclose(out.detach().numpy(), [[11.0, 17.0]])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[8.0, 10.0]])
    assert w.grad is None


def test_000_gradcheck_verbatim_raises_type_error_for_missing_weight():
    # The seed passes only the input to a Linear that needs a weight too.
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'weight'"):
        run_seed(SEED_000_LINEAR, SEED_000_GRADCHECK)


def test_000_gradcheck_corrected_returns_true():
    fixed = SEED_000_GRADCHECK.replace(
        "input = (Variable(torch.randn(20,20).double(), requires_grad=True),)",
        "input = (Variable(torch.randn(20,20).double(), requires_grad=True),\n"
        "         Variable(torch.randn(30,20).double(), requires_grad=True))")
    assert fixed != SEED_000_GRADCHECK
    ns, out = run_seed(SEED_000_LINEAR, fixed)
    assert out == "True\n" and ns["test"] is True
    # the module itself is callable too: gradcheck(...) == gradcheck.gradcheck(...)
    assert ns["gradcheck"](ns["Linear"](), ns["input"], eps=1e-6, atol=1e-4) is True


def test_000_gradcheck_with_bias():
    ns, _ = run_seed(SEED_000_LINEAR)
    inputs = (ember.randn(5, 4, dtype=ember.double, requires_grad=True),
              ember.randn(3, 4, dtype=ember.double, requires_grad=True),
              ember.randn(3, dtype=ember.double, requires_grad=True))
    assert ns["gradcheck"].gradcheck(ns["Linear"](), inputs, eps=1e-6, atol=1e-4) is True


def test_000_module_without_super_init_raises_like_torch():
    pytest.importorskip("ember.nn")
    ns, _ = run_seed(SEED_000_LINEAR, SEED_000_MODULE,
                     prelude=EMBER_PRELUDE + "import ember.nn as nn\n")
    with pytest.raises(AttributeError,
                       match=r"^cannot assign parameters before Module.__init__\(\) call$"):
        ns["Linear"](3, 2)


def test_002_truncated_legacy_linear():
    # 002 stops after `input, weight, bias = self.saved_tensors`: forward works, and
    # backward returns None, one value for three inputs -> PyTorch's count error.
    ns, _ = run_seed(SEED_002_LINEAR)
    x = ember.tensor([[1.0, 2.0]], requires_grad=True)
    w = ember.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    b = ember.tensor([0.5, -0.5], requires_grad=True)
    out = ns["Linear"]()(x, w, b)
    np.testing.assert_allclose(out.detach().numpy(), [[11.5, 16.5]])
    with pytest.raises(RuntimeError, match=r"^function LinearBackward returned an incorrect "
                                           r"number of gradients \(expected 3, got 1\)$"):
        out.sum().backward()
