"""Seed 001 (blog, PyTorch 0.3): ``saved_variables``, gradcheck and a GlobalMaxPool
Function, run on ember (see seed_runner.py)."""
import warnings

import numpy as np
import pytest

import ember

from tests.examples.seed_runner import needs_torch, run_seed, torch_or_none as _torch

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
