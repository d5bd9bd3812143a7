"""CTC loss vs PyTorch: values and gradients (every reduction, float32 and float64), padded
and concatenated targets, lengths as tensors or tuples, unbatched input, blank, impossible
alignments with and without zero_infinity, the module, the graph's node names and errors."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]
REDUCTIONS = ["mean", "sum", "none"]


def F(lib):
    return lib.nn.functional


def problem(seed, T, N, C, tl, blank=0, dtype=np.float64, S=None):
    r = np.random.default_rng(seed)
    x = r.standard_normal((T, N, C)).astype(dtype)
    tg = r.integers(0, C, (N, S or max(tl + [1])))
    tg[tg == blank] = (blank + 1) % C
    return x, tg


def ctc(x, tg, il, tl, as_tuple=False, **kw):
    def fn(lib, lp):
        lengths = (tuple(il), tuple(tl)) if as_tuple else (lib.tensor(il), lib.tensor(tl))
        return F(lib).ctc_loss(lp.log_softmax(2), lib.tensor(tg), *lengths, **kw)
    return fn


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_padded_targets(reduction, dtype):
    tl, il = [3, 2, 4, 0], [10, 7, 9, 4]
    x, tg = problem(0, 10, 4, 5, tl, dtype=dtype, S=5)
    compare(ctc(x, tg, il, tl, reduction=reduction), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_concatenated_targets_tuple_lengths_and_blank(dtype):
    tl, il = [3, 1, 4], [8, 6, 8]
    x, tg = problem(1, 8, 3, 6, tl, blank=5, dtype=dtype)
    flat = np.concatenate([tg[i, :tl[i]] for i in range(3)])
    compare(ctc(x, flat, il, tl, as_tuple=True, blank=5, reduction="sum"), x)


def test_repeated_labels_need_a_blank_between():
    # "1 1" needs three frames at least: at exactly 3 the only path is 1, blank, 1
    x = np.random.default_rng(2).standard_normal((5, 2, 3))
    tg, il, tl = np.array([[1, 1], [2, 2]]), [3, 5], [2, 2]
    compare(ctc(x, tg, il, tl, reduction="none"), x)


def test_noncontiguous_log_probs():
    tl, il = [2, 3], [6, 6]
    x, tg = problem(3, 6, 2, 4, tl)
    compare(ctc(x, tg, il, tl, reduction="mean"), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unbatched(dtype):
    x, tg = problem(4, 7, 1, 5, [3], dtype=dtype)

    def fn(lib, lp):
        return F(lib).ctc_loss(lp[:, 0].log_softmax(1), lib.tensor(tg[0]), lib.tensor(7),
                               lib.tensor(3), reduction="mean")
    compare(fn, x)


def test_log_probs_gradient_is_pytorchs_not_the_plain_derivative():
    # PyTorch's CTC gradient is exp(log_probs) - posterior: checked on a leaf log_probs
    x, tg = problem(5, 6, 2, 4, [3, 2])
    compare(lambda lib, lp: F(lib).ctc_loss(lp, lib.tensor(tg), lib.tensor([6, 5]),
                                            lib.tensor([3, 2]), reduction="sum"), x)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment(zero_infinity):
    x = np.random.default_rng(6).standard_normal((6, 2, 4))
    tg, il, tl = np.array([[1, 1, 1], [1, 2, 3]]), [3, 6], [3, 3]
    out = {}
    for lib in (torch, ember):
        lp = lib.tensor(x).log_softmax(2).detach().requires_grad_()
        loss = F(lib).ctc_loss(lp, lib.tensor(tg), lib.tensor(il), lib.tensor(tl),
                               reduction="none", zero_infinity=zero_infinity)
        loss.sum().backward()
        out[lib] = loss.detach().numpy(), lp.grad.numpy(), type(loss.grad_fn).__name__
    np.testing.assert_allclose(out[ember][0], out[torch][0])
    np.testing.assert_allclose(out[ember][1], out[torch][1], atol=1e-12)  # NaNs in place
    assert out[ember][2] == out[torch][2]


def test_module_and_node_names():
    x, tg = problem(7, 5, 2, 4, [2, 2])
    names = {}
    for lib in (torch, ember):
        lp = lib.tensor(x).log_softmax(2)
        m = lib.nn.CTCLoss(blank=0, reduction="mean", zero_infinity=False)
        names[lib] = [type(F(lib).ctc_loss(lp, lib.tensor(tg), lib.tensor([5, 4]),
                                           lib.tensor([2, 2]), reduction=r).grad_fn).__name__
                      for r in REDUCTIONS] + [repr(m), m.blank, m.reduction]
        assert not list(m.state_dict())
    x64 = x.copy()
    compare(lambda lib, lp: lib.nn.CTCLoss(reduction="sum")(
        lp.log_softmax(2), lib.tensor(tg), (5, 4), (2, 2)), x64)
    assert names[ember] == names[torch]


def test_double_backward_raises_as_in_pytorch():
    x, tg = problem(8, 4, 1, 3, [1])
    errors = []
    for lib in (torch, ember):
        lp = lib.tensor(x).log_softmax(2).detach().requires_grad_()
        loss = F(lib).ctc_loss(lp, lib.tensor(tg), lib.tensor([4]), lib.tensor([1]))
        g, = lib.autograd.grad(loss, lp, create_graph=True)
        errors.append(error_of(lambda: g.sum().backward()))
    assert errors[0] == errors[1]


def _errors(call):
    r = np.random.default_rng(9)
    x = r.standard_normal((6, 2, 4)).astype(np.float32)
    tg = np.array([[1, 2, 2], [3, 1, 0]])
    got = []
    for lib in (torch, ember):
        got.append(error_of(lambda: call(lib, lib.tensor(x).log_softmax(2), lib.tensor(tg))))
    assert got[0] == got[1], got
    assert got[0] is not None


@pytest.mark.parametrize("case", [
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6, 5]), lib.tensor([3, 2]), blank=4),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6, 5]), lib.tensor([3, 2]), blank=-1),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([7, 5]), lib.tensor([3, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([-1, 5]), lib.tensor([3, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6, 5]), lib.tensor([4, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6, 5]), lib.tensor([-1, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6, 5, 4]), lib.tensor([3, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6, 5]), lib.tensor([3])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp[None], tg, lib.tensor([6, 5]), lib.tensor([3, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg[None], lib.tensor([6, 5]), lib.tensor([3, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg[:1], lib.tensor([6, 5]), lib.tensor([3, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg.flatten()[:4], (6, 5), (3, 2)),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, (6, 5), (3, 2), reduction="avg"),
    lambda lib, lp, tg: F(lib).ctc_loss(lp.double().long(), tg, (6, 5), (3, 2)),
    lambda lib, lp, tg: F(lib).ctc_loss(lp.half(), tg, (6, 5), (3, 2)),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6.0, 5.0]), lib.tensor([3, 2])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp, tg, lib.tensor([6, 5]), lib.tensor([3.0, 2.0])),
    lambda lib, lp, tg: F(lib).ctc_loss(lp[:, :0], tg[:0], lib.tensor([], dtype=lib.long),
                                        lib.tensor([], dtype=lib.long)),
])
def test_errors(case):
    _errors(case)


def test_mixed_length_kinds_raise_type_error():
    x = ember.zeros(3, 1, 2)
    with pytest.raises(TypeError):
        ember.nn.functional.ctc_loss(x, ember.tensor([[1]]), (3,), ember.tensor([1]))
    with pytest.raises(TypeError):
        torch.nn.functional.ctc_loss(torch.zeros(3, 1, 2), torch.tensor([[1]]), (3,),
                                     torch.tensor([1]))
