"""ember.masked.MaskedTensor on its own: construction and its warnings, repr, elementwise
ops and mask rules, reductions, views, gradients reaching a leaf, errors, and dispatch held
only while a MaskedTensor lives (dense programs keep the fast path)."""
import gc
import math
import warnings

import pytest

import ember
from ember._torch_function import ACTIVE
from ember.masked import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of MaskedTensors")

PROTOTYPE = "The PyTorch API of MaskedTensors is in prototype stage"


def make(requires_grad=False):
    return masked_tensor(ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                         ember.tensor([[True, False, True], [False, False, False]]),
                         requires_grad=requires_grad)


def check(mt, data, mask):
    assert is_masked_tensor(mt)
    assert mt.get_mask().tolist() == mask
    got = mt.get_data().tolist()
    flat_mask = mask if isinstance(mask, bool) else None
    if flat_mask is not None:
        assert not mask or math.isclose(got, data, rel_tol=1e-6)
        return
    for g_row, d_row, m_row in zip(got, data, mask):
        if isinstance(m_row, list):
            for g, d, m in zip(g_row, d_row, m_row):
                assert not m or math.isclose(g, d, rel_tol=1e-6), (g, d)
        else:
            assert not m_row or math.isclose(g_row, d_row, rel_tol=1e-6)


def test_construction_and_warnings():
    with pytest.warns(UserWarning, match=PROTOTYPE):
        mt = make()
    assert isinstance(mt, MaskedTensor) and isinstance(mt, ember.Tensor)
    with pytest.warns(UserWarning, match="not recommended to create a MaskedTensor with a "
                                         "tensor that requires_grad"):
        MaskedTensor(ember.ones(2, requires_grad=True), ember.tensor([True, False]))
    assert tuple(mt.shape) == (2, 3) and mt.dtype == ember.float32 and mt.dim() == 2
    assert (mt.numel(), len(mt), mt.is_sparse, mt.requires_grad, mt.grad) == \
        (6, 2, False, False, None)
    assert not is_masked_tensor(ember.ones(1))
    # the data and mask are copies
    data, mask = ember.ones(2), ember.tensor([True, False])
    mt = masked_tensor(data, mask)
    data.add_(1)
    assert mt.get_data().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("data,mask,match,error", [
    ([1.0], ember.tensor([True]), "data must be a Tensor", TypeError),
    (ember.ones(2), [True, False], "mask must be a Tensor", TypeError),
    (ember.ones(2), ember.ones(2), "mask must have dtype bool.", TypeError),
    (ember.ones(2, dtype=ember.complex64), ember.tensor([True, True]),
     "complex64 is not supported in MaskedTensor.", TypeError),
    (ember.ones(2, 2), ember.tensor([True, True]), r"data.dim\(\) must equal mask.dim\(\)",
     ValueError),
    (ember.ones(2, 2), ember.ones(1, 2, dtype=ember.bool), r"data.size\(\) must equal",
     ValueError),
])
def test_constructor_errors(data, mask, match, error):
    with pytest.raises(error, match=match):
        masked_tensor(data, mask)


def test_repr():
    assert repr(make()) == ("MaskedTensor(\n  [\n    [  1.0000,       --,   3.0000],\n"
                            "    [      --,       --,       --]\n  ]\n)")
    assert repr(masked_tensor(ember.tensor(3.0), ember.tensor(True))) == \
        "MaskedTensor(  3.0000, True)"
    assert repr(masked_tensor(ember.tensor(3.0), ember.tensor(False))) == \
        "MaskedTensor(--, False)"
    assert repr(masked_tensor(ember.tensor([1, 2]), ember.tensor([True, False]))) == \
        "MaskedTensor(\n  [1,       --]\n)"
    assert str(make()) == repr(make())


def test_elementwise_ops_keep_the_mask():
    mt = make()
    mask = [[True, False, True], [False, False, False]]
    check(mt.exp(), [[math.e, 0, math.e ** 3], [0] * 3], mask)
    check(ember.sin(mt), [[math.sin(1), 0, math.sin(3)], [0] * 3], mask)
    check(mt + mt, [[2, 0, 6], [0] * 3], mask)
    check(mt * 2, [[2, 0, 6], [0] * 3], mask)
    check(2 + mt, [[3, 0, 5], [0] * 3], mask)
    check(mt - ember.ones(2, 3), [[0, 0, 2], [0] * 3], mask)
    check(mt.clamp(1.5, 2.5), [[1.5, 0, 2.5], [0] * 3], mask)
    check((mt > 2).to(ember.float32), [[0, 0, 1], [0] * 3], mask)
    other = masked_tensor(ember.ones(2, 3), ember.tensor([[False] * 3] * 2))
    with pytest.raises(ValueError, match="Input masks must match"):
        mt + other
    with pytest.raises(ValueError, match=r"len\(kwargs\) must equal 0"):
        mt.add(mt, alpha=2)
    with pytest.raises(TypeError, match="unsupported operand type"):
        2 - mt
    inplace = make()
    assert inplace.mul_(3) is inplace
    check(inplace, [[3, 0, 9], [0] * 3], mask)


def test_reductions_return_masked_tensors():
    mt = make()
    check(mt.sum(), 4.0, True)
    check(mt.mean(), 2.0, True)
    check(mt.amax(1), [3.0, 0.0], [True, False])
    check(ember.amin(mt, 1), [1.0, 0.0], [True, False])
    check(mt.argmax(1), [2.0, 0.0], [True, False])
    check(mt.prod(0), [1.0, 0.0, 3.0], [True, False, True])
    check(mt.sum(1, keepdim=True), [[4.0], [0.0]], [[True], [False]])
    check((mt > 2).all(1), [False, True], [True, False])
    empty = masked_tensor(ember.ones(2), ember.tensor([False, False]))
    assert repr(empty.sum()) == "MaskedTensor(--, False)"
    with pytest.warns(UserWarning, match="any is not implemented in __torch_dispatch__"):
        with pytest.raises(TypeError, match="Multiple dispatch failed"):
            (mt > 2).any()
    with pytest.raises(TypeError, match="unexpected keyword argument 'p'"):
        mt.norm()


def test_views_softmax_where_to_tensor():
    mt = make()
    check(mt[0], [1.0, 0.0, 3.0], [True, False, True])
    check(mt.transpose(0, 1), [[1, 0], [0, 0], [3, 0]], [[True, False], [False, False],
                                                         [True, False]])
    check(mt.view(3, 2), [[1, 0], [3, 0], [0, 0]], [[True, False], [True, False],
                                                    [False, False]])
    e1, e3 = math.e, math.e ** 3
    check(mt.softmax(1), [[e1 / (e1 + e3), 0, e3 / (e1 + e3)], [0] * 3],
          [[True, False, True], [False] * 3])
    assert mt.to_tensor(-1.0).tolist() == [[1.0, -1.0, 3.0], [-1.0, -1.0, -1.0]]
    cond = ember.tensor([[True, True, False], [True, False, False]])
    check(ember.where(cond, mt, ember.zeros(2, 3)), [[1, 0, 0], [0, 0, 0]],
          [[True, False, True], [False, True, True]])


def test_gradients_reach_the_leaf():
    mt = make(requires_grad=True)
    assert mt.requires_grad and mt.is_leaf
    (mt * mt).sum().backward()
    grad = mt.grad
    assert is_masked_tensor(grad) and grad is mt.grad
    assert grad.get_mask().tolist() == [[True, False, True], [False, False, False]]
    assert grad.get_data().tolist() == [[2.0, 0.0, 6.0], [0.0, 0.0, 0.0]]
    mt = make(requires_grad=True)
    out = mt.amax(1)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        out.backward()
    out.backward(masked_tensor(ember.tensor([2.0, 5.0]), ember.tensor([True, False])))
    assert mt.grad.get_data().tolist() == [[0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    flag = make()
    flag.requires_grad = True
    assert flag.requires_grad and flag.get_data().requires_grad
    mt.grad = None  # as optimizers' zero_grad does
    assert mt.grad is None
    mt.sum().backward()
    assert mt.grad.get_data().tolist() == [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    as_masked_tensor(x * 2, ember.tensor([True, False, True])).sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 2.0]


def test_unsupported_calls_raise_torchs_error():
    mt = make()
    with pytest.warns(UserWarning, match="cumsum is not implemented in __torch_dispatch__ "
                                         "for MaskedTensor"):
        with pytest.raises(TypeError, match="Multiple dispatch failed for "
                                            "'torch._ops.aten.cumsum.default'"):
            mt.cumsum(1)


def test_dispatch_is_held_only_while_one_lives():
    gc.collect()
    before = ACTIVE[0]
    mt = make(requires_grad=True)
    assert ACTIVE[0]
    mt.sum().backward()
    grad = mt.grad
    del mt, grad
    gc.collect()
    assert ACTIVE[0] == before
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # plain tensors never reach MaskedTensor's code
        assert (ember.ones(2) + 1).tolist() == [2.0, 2.0]
