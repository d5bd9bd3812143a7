"""ember.nested without torch: structure, autograd by finite differences (float64) and
error paths of both layouts."""
import pytest

import ember
from ember.autograd import gradcheck

F = ember.nn.functional


def _pieces(lengths=(2, 3), feat=3, requires_grad=False):
    gen = ember.Generator().manual_seed(0)
    return [ember.randn(n, feat, dtype=ember.float64, generator=gen,
                        requires_grad=requires_grad) for n in lengths]


@pytest.mark.parametrize("layout", [ember.strided, ember.jagged])
def test_structure(layout):
    a, b = _pieces()
    nt = ember.nested.nested_tensor([a, b], layout=layout)
    assert nt.is_nested and nt.layout == layout and nt.dim() == 3
    assert nt.size(0) == 2 and nt.size(2) == 3 and nt.numel() == 15
    assert [tuple(c.shape) for c in nt.unbind()] == [(2, 3), (3, 3)]
    padded = nt.to_padded_tensor(0.0)
    assert tuple(padded.shape) == (2, 3, 3)
    assert ember.equal(padded[0, :2], a) and ember.equal(padded[0, 2], ember.zeros(3,
                                                                                     dtype=a.dtype))
    assert not ember.ones(2).is_nested


def test_jagged_metadata():
    nt = ember.nested.nested_tensor(_pieces(), layout=ember.jagged)
    assert nt.offsets().tolist() == [0, 2, 5] and nt.lengths() is None
    assert tuple(nt.values().shape) == (5, 3)
    j = nt.size(1)
    assert repr(j).startswith("j") and nt.relu().size(1) is j
    assert repr(nt.shape) == f"ember.Size([2, {j}, 3])"
    assert len(nt) == 2
    t = nt.transpose(1, 2)
    assert t.size(2) is j and tuple(t.values().shape) == (3, 5)


def test_strided_sizes_error():
    nt = ember.nested.nested_tensor(_pieces())
    with pytest.raises(RuntimeError, match="Given dimension 1 is irregular"):
        nt.size(1)
    with pytest.raises(RuntimeError, match="doesn't support sizes"):
        nt.shape


@pytest.mark.parametrize("layout", [ember.strided, ember.jagged])
@pytest.mark.parametrize("op", ["linear_softmax", "layer_norm", "bmm_or_matmul", "sum_last"])
def test_gradcheck(layout, op):
    w = ember.randn(4, 3, dtype=ember.float64, generator=ember.Generator().manual_seed(1))
    g = ember.ones(3, dtype=ember.float64)

    def run(x, y):
        nt = ember.nested.as_nested_tensor([x, y], layout=layout)
        if op == "linear_softmax":
            out = F.linear(nt, w).softmax(-1)
        elif op == "layer_norm":
            out = F.layer_norm(nt, (3,), g, g * 0.5)
        elif op == "bmm_or_matmul":
            out = nt.bmm(nt.transpose(1, 2)) if layout == ember.strided else nt @ w.t()
        else:
            out = nt.sum(-1, keepdim=True)
        return out.to_padded_tensor(0.0)

    assert gradcheck(run, tuple(_pieces(requires_grad=True)))


def test_gradcheck_jagged_ragged_softmax_and_sdpa():
    def softmax_ragged(x, y):
        nt = ember.nested.as_nested_tensor([x, y], layout=ember.jagged)
        return F.softmax(nt, 1).values()

    assert gradcheck(softmax_ragged, tuple(_pieces(requires_grad=True)))
    gen = ember.Generator().manual_seed(2)
    pieces = [ember.randn(n, 2, 3, dtype=ember.float64, generator=gen, requires_grad=True)
              for n in (2, 3)]

    def attend(x, y):
        q = ember.nested.as_nested_tensor([x, y], layout=ember.jagged).transpose(1, 2)
        return F.scaled_dot_product_attention(q, q, q).transpose(1, 2).values()

    assert gradcheck(attend, tuple(pieces))


def test_leaf_grad_is_nested():
    for layout in (ember.strided, ember.jagged):
        nt = ember.nested.nested_tensor(_pieces(), layout=layout, requires_grad=True)
        assert nt.requires_grad and nt.is_leaf and nt.grad is None
        (nt * 2).to_padded_tensor(0.0).sum().backward()
        assert nt.grad.is_nested
        for g in nt.grad.unbind():
            assert ember.equal(g, ember.full_like(g, 2.0))
        with pytest.raises(RuntimeError, match="implicitly created only for scalar"):
            (nt * 2).backward()
        out = nt * 3
        out.backward(ember.nested.nested_tensor([ember.ones(2, 3), ember.ones(3, 3)],
                                                layout=layout, dtype=ember.float64))
        assert ember.equal(nt.grad.unbind()[1], ember.full((3, 3), 5.0, dtype=ember.float64))


def test_errors():
    nt = ember.nested.nested_tensor(_pieces())
    with pytest.raises(NotImplementedError, match="Could not run 'aten::cumsum'"):
        ember.cumsum(nt, 2)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp'"):
        nt.exp()
    nj = ember.nested.nested_tensor(_pieces(), layout=ember.jagged)
    with pytest.raises(NotImplementedError, match=r"aten\.cumsum\.default"):
        ember.cumsum(nj, 2)
    with pytest.raises(TypeError, match="Only lists"):
        ember.nested.nested_tensor((ember.ones(2),))
    with pytest.raises(RuntimeError, match="At least one of offsets or lengths"):
        ember.nested.nested_tensor_from_jagged(ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="single ragged dimension"):
        ember.nested.nested_tensor([ember.ones(2, 3), ember.ones(2, 4)], layout=ember.jagged)
    with pytest.raises(ValueError, match="batch dimension for jagged NT"):
        nj.transpose(0, 1)
    with pytest.raises(RuntimeError, match="cannot call binary pointwise function add"):
        nj + ember.nested.nested_tensor(_pieces(), layout=ember.jagged)


def test_dispatch_held_only_while_nested_tensors_live():
    import gc
    from ember._torch_function import DISPATCHING, _State
    gc.collect()
    before = _State.held
    nt = ember.nested.nested_tensor(_pieces())
    assert DISPATCHING[0] and _State.held > before
    del nt
    gc.collect()
    assert _State.held == before
