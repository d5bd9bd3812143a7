"""Every code example of the seed documents (../shared/seeds/), run on ember.

Each example is kept verbatim as source text (only the indentation that the
saved web pages lost is restored) and executed with the imports changed to
ember: ``import ember as torch``, ``from ember.autograd import Function,
Variable, gradcheck``, ``import ember.nn as nn``. Seed 004 writes ``t`` for
torch, so its snippets get ``import ember as t``.

Expected values come from math / NumPy; where torch is installed the same
source also runs on torch and the two are compared. Seed bugs (004's undefined
``x``/``y``/``args``, 000's gradcheck with a missing ``weight``, 003/004's
``extra_repr``, 000's Module without ``super().__init__()``) must fail exactly
as they do on PyTorch.
"""
import contextlib
import io
import re
import warnings

import numpy as np
import pytest

import ember

try:
    import torch as _torch
except ImportError:  # pragma: no cover - torch is the oracle, optional
    _torch = None

EMBER_PRELUDE = ("import ember as torch\n"
                 "from ember.autograd import Function, Variable, gradcheck\n")
TORCH_PRELUDE = ("import torch\n"
                 "from torch.autograd import Function, Variable, gradcheck\n")


def run_seed(*sources, lib="ember", main=False, extra=None, prelude=None):
    """Execute seed sources in one fresh namespace; return (namespace, stdout)."""
    if prelude is None:
        prelude = EMBER_PRELUDE if lib == "ember" else TORCH_PRELUDE
    ns = {"__name__": "__main__" if main else "seed"}
    if extra:
        ns.update(extra)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(prelude, "<prelude>", "exec"), ns)
        for i, src in enumerate(sources):
            if lib == "ember":
                src = port_imports(src)
            exec(compile(src, f"<seed {lib} {i}>", "exec"), ns)
    return ns, out.getvalue()


def port_imports(src):
    """The only change a seed gets: its own ``from torch.x import y`` lines name ember."""
    return re.sub(r"^(\s*)from torch(\.| )", r"\1from ember\2", src, flags=re.M)


needs_torch = pytest.mark.skipif(_torch is None, reason="torch not installed")

# --------------------------------------------------------------------------------------------
# seed 003 (English note, PyTorch 1.1), also seed 004 (same code, Chinese comments)
# --------------------------------------------------------------------------------------------
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


def _np_linear(x, w, b=None):
    out = x @ w.T
    return out if b is None else out + b


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
# seed 001 (blog, PyTorch 0.3): saved_variables, gradcheck, GlobalMaxPool
# --------------------------------------------------------------------------------------------
SEED_001_LINEAR_FUNCTION = '''
class LinearFunction(Function):
    # forward 和 backward 都得是 静态方法！！！！！
    @staticmethod
    # bias 是个可选参数，有个 默认值 None
    def forward(ctx, input, weight, bias=None):
        # input，weight 都已经变成了 Tensor
        # 用 ctx 把该存的存起来，留着 backward 的时候用
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    # 由于 forward 只有一个 返回值，所以 backward 只需要一个参数 接收 梯度。
    @staticmethod
    def backward(ctx, grad_output):
        # grad_output 是 Variable 类型。
        # 在开头的地方将保存的 tensor 给 unpack 了
        # 然后 给 所有应该返回的 梯度 以 None 初始化。
        # saved_variables 返回的是 Variable！！！ 不是 Tensor 了。
        input, weight, bias = ctx.saved_variables
        grad_input = grad_weight = grad_bias = None

        # needs_input_grad 检查是可选的。如果想使得 代码更简单的话，可以忽略。
        # 给不需要梯度的 参数返回梯度 不是一个错误。
        # 返回值 的个数 需要和 forward 形参的个数（不包含 ctx）一致
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)
        # 梯度的顺序和 forward 形参的顺序要对应。
        return grad_input, grad_weight, grad_bias
'''

SEED_001_HELPER = '''
# input, weight, 是 Variable
def linear(input, weight, bias=None):
    # 一定是要 通过调用 apply 来用的。 Function.apply 中估计做了不少事情。
    return LinearFunction.apply(input, weight, bias)
'''

SEED_001_GRADCHECK = '''
from torch.autograd import gradcheck
# Check gradients computed via small finite differences against analytical gradients

# 检查的是 inputs 中 requires_grad=True 的梯度，
# 一定要记得 double() 一下！！！！！！
input = (Variable(torch.randn(20, 20).double(), requires_grad=True),
             Variable(torch.randn(30, 20).double(), requires_grad=True),)
test = gradcheck(LinearFunction.apply, input, eps=1e-6, atol=1e-4)
# 如果通过，最后会打印一个 True
print(test)
'''

SEED_001_GLOBAL_MAX_POOL = '''
class GlobalMaxPool(Function):
    @staticmethod
    def forward(ctx, inputs):
        bs, c, h, w = inputs.size()
        flatten_hw = inputs.view(bs, c, -1)
        max_val, indices = torch.max(flatten_hw, dim=-1, keepdim=True)
        max_val = max_val.view(bs, c, 1, 1)
        ctx.save_for_backward(inputs, indices)
        # 只有返回 indices， 才让 save_for_backward。。。 迫不得已。
        return max_val, indices

    # This function has only a single output, so it gets only one gradient
    @staticmethod
    def backward(ctx, grad_max_val, grad_indices):
        inputs, indices = ctx.saved_variables

        bs, c, h, w = inputs.size()
        grad_inputs = inputs.data.new().resize_as_(inputs.data).zero_().view(bs, c, -1)
        grad_inputs.scatter_(-1, indices.data,
                             torch.squeeze(grad_max_val.data).contiguous().view(bs, c, 1))
        grad_inputs = grad_inputs.view_as(inputs.data)

        return Variable(grad_inputs, volatile=grad_max_val.volatile)


def global_max_pool(input):
    return GlobalMaxPool.apply(input)


if __name__ == '__main__':
    in_ = Variable(torch.randn(2, 1, 3, 3).double(), requires_grad=True)
    res, _ = global_max_pool(in_)
    # print(res)

    res.sum().backward()
    res = gradcheck(GlobalMaxPool.apply, (in_,))
    print(res)
'''


def test_001_saved_variables_warns_deprecation_and_works():
    ns, _ = run_seed(SEED_001_LINEAR_FUNCTION, SEED_001_HELPER)
    x = ember.tensor([[1.0, 2.0]], requires_grad=True)
    w = ember.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    out = ns["linear"](x, w)
    np.testing.assert_allclose(out.detach().numpy(), [[11.0, 17.0]])
    with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated; use "
                                                "'saved_tensors'"):
        out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[8.0, 10.0]])
    np.testing.assert_allclose(w.grad.numpy(), [[1.0, 2.0], [1.0, 2.0]])


def test_001_gradcheck_prints_true():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ns, out = run_seed(SEED_001_LINEAR_FUNCTION, SEED_001_HELPER, SEED_001_GRADCHECK)
    assert out == "True\n"
    assert ns["test"] is True


def test_001_global_max_pool_main_block_prints_true():
    # The __main__ block verbatim: forward, res.sum().backward(), gradcheck -> True.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns, out = run_seed(SEED_001_GLOBAL_MAX_POOL, main=True)
    assert out == "True\n"
    assert ns["res"] is True
    in_ = ns["in_"]
    x = in_.detach().numpy().reshape(2, 1, 9)
    expected = np.zeros_like(x)
    np.put_along_axis(expected, x.argmax(-1)[..., None], 1.0, axis=-1)
    # the first res.sum().backward() put exactly one 1 per (batch, channel) at the max
    np.testing.assert_array_equal(in_.grad.numpy(), expected.reshape(2, 1, 3, 3))
    kinds = {(w.category, str(w.message)) for w in caught}
    assert (DeprecationWarning, "'saved_variables' is deprecated; use 'saved_tensors'") in kinds
    # reading grad_max_val.volatile warns (as torch does); volatile=False itself doesn't
    assert (UserWarning, "volatile was removed (Variable.volatile is always False)") in kinds


def test_001_global_max_pool_outputs_and_grads():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns, _ = run_seed(SEED_001_GLOBAL_MAX_POOL)
        rng = np.random.default_rng(3)
        a = rng.standard_normal((3, 2, 4, 5))
        x = ember.tensor(a, requires_grad=True)
        max_val, indices = ns["global_max_pool"](x)
        flat = a.reshape(3, 2, -1)
        np.testing.assert_allclose(max_val.detach().numpy(), flat.max(-1).reshape(3, 2, 1, 1))
        np.testing.assert_array_equal(indices.numpy(), flat.argmax(-1)[..., None])
        assert max_val.requires_grad and max_val.grad_fn.name() == "GlobalMaxPoolBackward"
        assert indices.dtype == ember.int64 and not indices.requires_grad
        g = rng.standard_normal((3, 2, 1, 1))
        max_val.backward(ember.tensor(g))
    expected = np.zeros_like(flat)
    np.put_along_axis(expected, flat.argmax(-1)[..., None], g.reshape(3, 2, 1), axis=-1)
    np.testing.assert_allclose(x.grad.numpy(), expected.reshape(a.shape))


@needs_torch
def test_001_global_max_pool_same_as_torch():
    a = np.random.default_rng(4).standard_normal((2, 3, 3, 3))
    grads = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib, mod in (("ember", ember), ("torch", _torch)):
            ns, _ = run_seed(SEED_001_GLOBAL_MAX_POOL, lib=lib)
            x = mod.tensor(a, requires_grad=True)
            res, idx = ns["global_max_pool"](x)
            (res * mod.arange(6.0, dtype=mod.float64).view(2, 3, 1, 1)).sum().backward()
            grads[lib] = (res.detach().numpy(), idx.numpy(), x.grad.numpy())
    for e, t in zip(grads["ember"], grads["torch"]):
        np.testing.assert_array_equal(e, t)


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


# --------------------------------------------------------------------------------------------
# seed 000 (PyTorch 0.2/0.3 docs, Chinese): the legacy API; 002 repeats its first half
# --------------------------------------------------------------------------------------------
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
