"""EmbeddingBag / F.embedding_bag and the distances (CosineSimilarity, PairwiseDistance,
F.pdist) vs PyTorch: values, gradients of inputs and weights, init, repr and errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn as enn
import ember.nn.functional as EF
from tests.parity.compare import compare, error_of
from tests.parity.nn.test_layers import FLOATS, randn

INDICES_1D = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
OFFSETS = np.array([0, 4, 4, 7])  # the second bag is empty


def _lib_f(lib):
    return TF if lib is torch else EF


BAG_CASES = {
    "sum_offsets": dict(mode="sum"),
    "mean_offsets": dict(mode="mean"),
    "max_offsets": dict(mode="max"),
    "mean_padding": dict(mode="mean", padding_idx=2),
    "max_padding": dict(mode="max", padding_idx=2),
    "sum_padding_negative": dict(mode="sum", padding_idx=-8),
    "last_offset": dict(mode="sum", include_last_offset=True),
    "mean_last_offset": dict(mode="mean", include_last_offset=True),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", sorted(BAG_CASES))
def test_embedding_bag_1d(case, dtype):
    kw = BAG_CASES[case]
    w = randn((10, 3), dtype, seed=1)
    offsets = np.append(OFFSETS, 10) if kw.get("include_last_offset") else OFFSETS

    def fn(lib, w):
        return _lib_f(lib).embedding_bag(lib.tensor(INDICES_1D), w, lib.tensor(offsets), **kw)
    compare(fn, w)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d(mode, dtype):
    w = randn((10, 4), dtype, seed=2)
    idx = np.array([[1, 2, 2], [0, 9, 3], [2, 2, 2]])

    def fn(lib, w):
        return _lib_f(lib).embedding_bag(lib.tensor(idx), w, mode=mode, padding_idx=2)
    compare(fn, w)


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_bag_max_ties_go_to_the_first_row(dtype):
    """Equal rows (here: rows of equal values) give the max's gradient to the first."""
    w = np.repeat(randn((1, 3), dtype, seed=5), 10, axis=0)

    def fn(lib, w):
        return _lib_f(lib).embedding_bag(lib.tensor(INDICES_1D), w, lib.tensor(OFFSETS),
                                         mode="max")
    compare(fn, w)


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_bag_per_sample_weights(dtype):
    w = randn((10, 3), dtype, seed=3)
    psw = randn((10,), dtype, seed=4)

    def fn(lib, w, psw):
        return _lib_f(lib).embedding_bag(lib.tensor(INDICES_1D), w, lib.tensor(OFFSETS),
                                         mode="sum", per_sample_weights=psw)
    compare(fn, w, psw)
    compare(lambda lib, w, psw: _lib_f(lib).embedding_bag(
        lib.tensor(INDICES_1D.reshape(2, 5)), w, mode="sum", per_sample_weights=psw,
        padding_idx=4), w, psw.reshape(2, 5))


def test_embedding_bag_max_norm_renormalizes_weight():
    w = randn((10, 3), np.float64, seed=5, scale=3.0)
    results = []
    for lib in (torch, ember):
        weight = lib.tensor(w.copy())
        out = _lib_f(lib).embedding_bag(lib.tensor(INDICES_1D), weight, lib.tensor(OFFSETS),
                                        max_norm=1.5, mode="sum")
        results.append((out.numpy(), weight.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", padding_idx=3),
                                dict(mode="sum", max_norm=1.0, norm_type=1.0)], ids=str)
def test_embedding_bag_module(kw):
    torch.manual_seed(0)
    t_mod = torch.nn.EmbeddingBag(10, 3, **kw).double()
    e_mod = enn.EmbeddingBag(10, 3, **kw).double()
    assert repr(e_mod) == repr(t_mod)
    assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    if "padding_idx" in kw:
        assert not np.any(e_mod.weight[3].detach().numpy())
    e_mod.load_state_dict({"weight": ember.tensor(t_mod.weight.detach().numpy())})
    t_out = t_mod(torch.tensor(INDICES_1D), torch.tensor(OFFSETS))
    e_out = e_mod(ember.tensor(INDICES_1D), ember.tensor(OFFSETS))
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    cot = np.random.default_rng(0).standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(cot))
    e_out.backward(ember.tensor(cot))
    np.testing.assert_allclose(e_mod.weight.grad.numpy(), t_mod.weight.grad.numpy(), rtol=1e-12,
                               atol=1e-14)


def test_embedding_bag_from_pretrained():
    w = randn((5, 2), np.float32, seed=6)
    t_mod = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    e_mod = enn.EmbeddingBag.from_pretrained(ember.tensor(w), mode="sum")
    assert repr(e_mod) == repr(t_mod) and not e_mod.weight.requires_grad
    idx = np.array([[0, 4], [1, 1]])
    np.testing.assert_allclose(e_mod(ember.tensor(idx)).numpy(),
                               t_mod(torch.tensor(idx)).numpy(), rtol=1e-6)


def _w(lib):
    return lib.zeros(10, 3)


BAG_ERRORS = {
    "2d_with_offsets": lambda lib, F: F.embedding_bag(lib.tensor([[1, 2]]), _w(lib),
                                                      lib.tensor([0])),
    "1d_no_offsets": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib)),
    "2d_offsets": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib),
                                                 lib.tensor([[0, 1]])),
    "psw_mean": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib), lib.tensor([0]),
                                               per_sample_weights=lib.ones(2)),
    "psw_shape": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib), lib.tensor([0]),
                                                mode="sum", per_sample_weights=lib.ones(3)),
    "mode": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib), lib.tensor([0]),
                                           mode="median"),
    "3d_input": lambda lib, F: F.embedding_bag(lib.tensor([[[1]]]), _w(lib)),
    "index_range": lambda lib, F: F.embedding_bag(lib.tensor([1, 20]), _w(lib),
                                                  lib.tensor([0])),
    "float_index": lambda lib, F: F.embedding_bag(lib.tensor([1.0]), _w(lib), lib.tensor([0])),
    "offsets_end": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib),
                                                  lib.tensor([0, 5])),
    "padding_range": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib),
                                                    lib.tensor([0]), padding_idx=12),
    "max_scale_grad": lambda lib, F: F.embedding_bag(lib.tensor([1, 2]), _w(lib),
                                                     lib.tensor([0]), mode="max",
                                                     scale_grad_by_freq=True),
    "module_padding": lambda lib, F: lib.nn.EmbeddingBag(10, 3, padding_idx=12),
}


def _as_torch_names(err):
    """ember names its own types (``ember.Size``, ``ember._tensor.Tensor``) in messages."""
    return err[0], err[1].replace("ember._tensor.Tensor", "torch.Tensor").replace(
        "ember.Size", "torch.Size")


@pytest.mark.parametrize("case", sorted(BAG_ERRORS))
def test_embedding_bag_errors_match(case):
    t_err = error_of(lambda: BAG_ERRORS[case](torch, TF))
    e_err = error_of(lambda: BAG_ERRORS[case](ember, EF))
    assert t_err is not None and _as_torch_names(e_err) == t_err


def test_embedding_bag_scale_grad_by_freq_not_implemented():
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        EF.embedding_bag(ember.tensor([1, 2]), ember.zeros(10, 3), ember.tensor([0]),
                         scale_grad_by_freq=True)


def test_embedding_bag_first_offset_error():
    t_err = error_of(lambda: TF.embedding_bag(torch.tensor([1, 2]), torch.zeros(10, 3),
                                              torch.tensor([1])))
    e_err = error_of(lambda: EF.embedding_bag(ember.tensor([1, 2]), ember.zeros(10, 3),
                                              ember.tensor([1])))
    assert e_err[0] == t_err[0] and t_err[1].startswith(e_err[1])


# ---- distances -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes,dim", [(((4, 5), (4, 5)), 1), (((4, 5), (1, 5)), 1),
                                        (((3, 4, 5), (4, 5)), 0), (((5,), (3, 5)), -1),
                                        (((2, 3, 4), (2, 3, 4)), 2)], ids=str)
def test_cosine_similarity(shapes, dim, dtype):
    a, b = randn(shapes[0], dtype, seed=7), randn(shapes[1], dtype, seed=8)
    compare(lambda lib, a, b: _lib_f(lib).cosine_similarity(a, b, dim=dim), a, b)
    compare(lambda lib, a, b: getattr(lib.nn, "CosineSimilarity")(dim, 1e-6)(a, b), a, b)


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide")  # norm's grad at 0
@pytest.mark.parametrize("eps", [1e-8, 1e-2])
def test_cosine_similarity_clamps_each_small_norm(eps):
    a = randn((3, 4), np.float64, seed=9) * np.array([[1.0], [1e-3], [1e-5]])
    b = randn((3, 4), np.float64, seed=10) * np.array([[1.0], [1e-4], [1.0]])
    b[0] = 0.0  # a zero vector: similarity 0, finite gradient
    compare(lambda lib, a, b: _lib_f(lib).cosine_similarity(a, b, eps=eps), a, b)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p, keepdim, dtype):
    a, b = randn((4, 5), dtype, seed=11), randn((4, 5), dtype, seed=12)
    compare(lambda lib, a, b: _lib_f(lib).pairwise_distance(a, b, p=p, keepdim=keepdim), a, b)
    compare(lambda lib, a, b: lib.nn.PairwiseDistance(p, 1e-3, keepdim)(a, b), a, b)
    compare(lambda lib, a, b: _lib_f(lib).pairwise_distance(a, b, p=p), a[0], b[:, 0:1])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, float("inf")])
def test_pdist(p, dtype):
    x = randn((5, 3), dtype, seed=13)
    compare(lambda lib, x: _lib_f(lib).pdist(x, p), x)


def test_distance_module_reprs_and_errors():
    for args in [(), (0, 1e-3)]:
        assert repr(enn.CosineSimilarity(*args)) == repr(torch.nn.CosineSimilarity(*args))
        assert repr(enn.PairwiseDistance(*args)) == repr(torch.nn.PairwiseDistance(*args))
    cases = [lambda lib: _lib_f(lib).cosine_similarity(lib.zeros(2, 3), lib.zeros(2, 4)),
             lambda lib: _lib_f(lib).pairwise_distance(lib.zeros(2, 3), lib.zeros(2, 4)),
             lambda lib: _lib_f(lib).pdist(lib.zeros(2, 3, 4)),
             lambda lib: _lib_f(lib).pdist(lib.zeros(2, 3), p=-1)]
    for case in cases:
        t_err = error_of(lambda: case(torch))
        assert t_err is not None and error_of(lambda: case(ember)) == t_err


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf")])
@pytest.mark.parametrize("shapes", [((4, 3), (5, 3)), ((2, 4, 3), (2, 5, 3)),
                                    ((2, 1, 4, 3), (3, 30, 3))], ids=str)
def test_cdist(shapes, p, dtype):
    a, b = randn(shapes[0], dtype, seed=14), randn(shapes[1], dtype, seed=15)
    compare(lambda lib, a, b: lib.cdist(a, b, p=p), a, b, rtol=1e-3 if p == 2.0 else None)


def test_cdist_errors_match():
    cases = [lambda lib: lib.cdist(lib.zeros(3), lib.zeros(3)),
             lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 4)),
             lambda lib: lib.cdist(lib.zeros(2, 3, dtype=lib.int64),
                                   lib.zeros(2, 3, dtype=lib.int64)),
             lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 3), p=-1),
             lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 3), compute_mode="fast"),
             lambda lib: lib.cdist(lib.zeros(2, 2, 3), lib.zeros(3, 2, 3))]
    for case in cases:
        t_err = error_of(lambda: case(torch))
        assert t_err is not None and error_of(lambda: case(ember)) == t_err
