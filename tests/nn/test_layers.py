"""Behaviour tests (no torch) for the basic layers, activations, dropout, Embedding,
F.pad/one_hot/normalize, nn.init and nn.utils: finite-difference first and second
derivatives in float64, repr strings, hand-computed values and PyTorch's error wording."""
import math

import numpy as np
import pytest

import ember
from ember import nn
import ember.nn.functional as F
from ember.nn import init

from tests.helpers import check_grad, check_second_grad


def rnd(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def away_from(x, points, margin=0.05):
    """Push values at least ``margin`` away from the kinks in ``points``."""
    x = x.copy()
    for p in points:
        close = np.abs(x - p) < margin
        x[close] = p + np.where(x[close] >= p, margin, -margin)
    return x


# ---- finite differences -------------------------------------------------------------------
SMOOTH = {
    "gelu": lambda x: F.gelu(x), "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu, "mish": F.mish, "softplus": lambda x: F.softplus(x, beta=1.5),
    "softmax": lambda x: F.softmax(x, dim=1), "log_softmax": lambda x: F.log_softmax(x, dim=0),
    "sigmoid": F.sigmoid, "tanh": F.tanh,
    "normalize": lambda x: F.normalize(x, dim=1), "normalize_p3": lambda x: F.normalize(x, 3, 0),
}
PIECEWISE = {
    "relu": (F.relu, [0.0]), "relu6": (F.relu6, [0.0, 6.0]),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), [0.0]), "elu": (lambda x: F.elu(x, 0.7), [0.0]),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 1.5), [-0.5, 1.5]),
    "softplus_threshold": (lambda x: F.softplus(x, 2.0, 3.0), [1.5]),
}


@pytest.mark.parametrize("name", list(SMOOTH))
def test_smooth_activation_grads(name):
    x = rnd(3, 4, scale=2.0)
    check_grad(SMOOTH[name], x)
    check_second_grad(SMOOTH[name], x)


@pytest.mark.parametrize("name", list(PIECEWISE))
def test_piecewise_activation_grads(name):
    fn, kinks = PIECEWISE[name]
    x = away_from(rnd(4, 5, scale=4.0), kinks)
    check_grad(fn, x)
    check_second_grad(lambda t: fn(t) * t, x)  # the double backward through the grad input


def test_activation_gradients_at_kinks_follow_pytorch():
    x = ember.tensor([0.0, 6.0, -1.0, 1.0], requires_grad=True)
    F.relu6(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]  # hardtanh_backward: open interval
    x.grad = None
    F.hardtanh(x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 0.0]
    x.grad = None
    F.leaky_relu(x, 0.1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.1, 1.0, 0.1, 1.0])
    x.grad = None
    F.elu(x, 2.0).sum().backward()  # x <= 0 takes the exponential branch: alpha * exp(0)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 1.0, 2.0 * math.exp(-1), 1.0])


def test_activation_values_hand_computed():
    x = ember.tensor([-2.0, 0.0, 1.0, 30.0, -100.0], dtype=ember.float64)
    np.testing.assert_allclose(F.elu(x).numpy(), [math.expm1(-2), 0, 1, 30, math.expm1(-100)])
    np.testing.assert_allclose(F.silu(x).numpy(), [v / (1 + math.exp(-v)) for v in x.tolist()])
    sp = [math.log1p(math.exp(v)) if v <= 20 else v for v in x.tolist()]
    np.testing.assert_allclose(F.softplus(x).numpy(), sp)
    np.testing.assert_allclose(F.mish(x).numpy(), [v * math.tanh(s) for v, s in
                                                   zip(x.tolist(), sp)], atol=1e-300)
    np.testing.assert_allclose(F.gelu(x).numpy(), [0.5 * v * (1 + math.erf(v / math.sqrt(2)))
                                                   for v in x.tolist()])
    t = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
         for v in x.tolist()]
    np.testing.assert_allclose(F.gelu(x, approximate="tanh").numpy(), t)
    big = ember.tensor([1000.0, -1000.0], requires_grad=True)
    for fn in (F.elu, F.silu, F.softplus, F.mish, F.gelu):
        out = fn(big)
        out.sum().backward()
        assert np.isfinite(out.detach().numpy()).all() and np.isfinite(big.grad.numpy()).all()
        big.grad = None


def test_float32_stays_float32():
    x = ember.randn(3, 2)
    for fn in [F.relu, F.relu6, F.leaky_relu, F.elu, F.gelu, F.silu, F.mish, F.softplus,
               F.hardtanh, lambda t: F.normalize(t), lambda t: F.pad(t, (1, 1))]:
        assert fn(x).dtype is ember.float32


def test_inplace_activations_write_the_input():
    for fn in [lambda t: F.relu(t, inplace=True), lambda t: F.elu(t, inplace=True),
               lambda t: F.leaky_relu(t, 0.5, True), lambda t: F.hardtanh(t, inplace=True),
               lambda t: nn.ReLU6(inplace=True)(t), lambda t: nn.SiLU(inplace=True)(t)]:
        x = ember.tensor([-2.0, 0.5, 3.0])
        out = fn(x)
        assert out is x and x.tolist() != [-2.0, 0.5, 3.0]
    leaf = ember.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.elu(leaf, inplace=True)


@pytest.mark.parametrize("shape", [(4, 3), (2, 2, 3), (3,)])
def test_linear_grads(shape):
    check_grad(lambda x, w, b: F.linear(x, w, b), rnd(*shape), rnd(5, 3, seed=1),
               rnd(5, seed=2))
    check_second_grad(lambda x, w: F.linear(x, w) ** 2, rnd(*shape), rnd(5, 3, seed=1))


def test_bilinear_grads_and_value():
    x1, x2, w, b = rnd(2, 3), rnd(2, 4, seed=1), rnd(5, 3, 4, seed=2), rnd(5, seed=3)
    out = F.bilinear(*(ember.tensor(a) for a in (x1, x2, w, b))).numpy()
    np.testing.assert_allclose(out, np.einsum("ni,oij,nj->no", x1, w, x2) + b)
    check_grad(F.bilinear, x1, x2, w, b)
    check_second_grad(lambda a, c, w: F.bilinear(a, c, w) ** 2, x1, x2, w)


def test_linear_module_init_bounds_and_repr():
    ember.manual_seed(0)
    m = nn.Linear(400, 30)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives the same bound
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound
    assert repr(m) == "Linear(in_features=400, out_features=30, bias=True)"
    assert repr(nn.Linear(2, 3, bias=False)) == "Linear(in_features=2, out_features=3, bias=False)"
    assert nn.Linear(2, 3, bias=False).bias is None
    assert [n for n, _ in nn.Bilinear(2, 3, 4).named_parameters()] == ["weight", "bias"]
    assert repr(nn.Bilinear(2, 3, 4, bias=False)) == \
        "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=False)"
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        empty = nn.Linear(0, 3)
    assert empty.bias.abs().sum().item() == 0  # fan_in 0: bound 0


def test_linear_shape_error_messages():
    m = nn.Linear(5, 2)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(4x3 and 5x2\)"):
        m(ember.zeros(4, 3))
    with pytest.raises(RuntimeError, match=r"\(8x3 and 5x2\)"):
        m(ember.zeros(2, 4, 3))
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input2 size does not match weight "
                                           "size: got 2 but expected 3"):
        F.bilinear(ember.zeros(4, 3), ember.zeros(4, 2), ember.zeros(5, 3, 3))


def test_identity_flatten_unflatten():
    x = ember.randn(2, 3, 4)
    assert nn.Identity(1, k=2)(x) is x
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(2, (2, 2))(x).shape == (2, 3, 2, 2)
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Unflatten(1, (2, 3))) == "Unflatten(dim=1, unflattened_size=(2, 3))"
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found "
                                        "type int"):
        nn.Unflatten(1, 5)


def test_activation_reprs():
    cases = {nn.ReLU(): "ReLU()", nn.ReLU(True): "ReLU(inplace=True)", nn.ReLU6(): "ReLU6()",
             nn.LeakyReLU(): "LeakyReLU(negative_slope=0.01)",
             nn.LeakyReLU(0.2, True): "LeakyReLU(negative_slope=0.2, inplace=True)",
             nn.ELU(): "ELU(alpha=1.0)", nn.GELU(): "GELU(approximate='none')",
             nn.GELU("tanh"): "GELU(approximate='tanh')", nn.SiLU(): "SiLU()",
             nn.Mish(): "Mish()", nn.Sigmoid(): "Sigmoid()", nn.Tanh(): "Tanh()",
             nn.Hardtanh(): "Hardtanh(min_val=-1.0, max_val=1.0)",
             nn.Softplus(): "Softplus(beta=1.0, threshold=20.0)",
             nn.Softmax(1): "Softmax(dim=1)", nn.LogSoftmax(): "LogSoftmax(dim=None)"}
    for m, text in cases.items():
        assert repr(m) == text
    assert list(nn.ReLU().parameters()) == []


# ---- dropout -------------------------------------------------------------------------------
def test_dropout_train_eval_and_scaling():
    ember.manual_seed(1)
    m = nn.Dropout(0.25)
    x = ember.ones(100, 100, requires_grad=True)
    y = m(x)
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75], rtol=1e-7)
    assert abs((y.detach().numpy() == 0).mean() - 0.25) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    m.eval()
    assert m(x) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert (F.dropout(x, 1.0).detach().numpy() == 0).all()
    z = ember.ones(10)
    assert F.dropout(z, 0.5, inplace=True) is z
    assert repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"
    assert repr(nn.Dropout2d(0.1, True)) == "Dropout2d(p=0.1, inplace=True)"


def test_dropout_p_validation():
    msg = "dropout probability has to be between 0 and 1, but got 1.5"
    for call in (lambda: nn.Dropout(1.5), lambda: F.dropout(ember.ones(2), 1.5),
                 lambda: nn.Dropout2d(1.5), lambda: F.dropout2d(ember.ones(1, 2, 2, 2), 1.5)):
        with pytest.raises(ValueError, match=msg):
            call()


def test_dropout2d_and_1d_channelwise():
    ember.manual_seed(2)
    y = F.dropout2d(ember.ones(8, 16, 4, 4), 0.5).numpy().reshape(8, 16, 16)
    assert ((y == 0).all(-1) | (y == 2).all(-1)).all()
    assert 0.3 < (y[..., 0] == 0).mean() < 0.7
    y1 = F.dropout1d(ember.ones(8, 16, 5), 0.5).numpy()
    assert ((y1 == 0).all(-1) | (y1 == 2).all(-1)).all()
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(ember.ones(2, 3, 4), 0.5)


# ---- Embedding -----------------------------------------------------------------------------
def test_embedding_lookup_accumulates_and_skips_padding():
    w = rnd(6, 3)
    m = nn.Embedding.from_pretrained(ember.tensor(w), freeze=False, padding_idx=0)
    idx = ember.tensor([[1, 1, 0], [5, 1, 0]])
    out = m(idx)
    np.testing.assert_array_equal(out.detach().numpy(), w[idx.numpy()])
    out.sum().backward()
    expected = np.zeros((6, 3))
    expected[1] = 3
    expected[5] = 1
    np.testing.assert_array_equal(m.weight.grad.numpy(), expected)  # row 0: no gradient
    check_grad(lambda w: F.embedding(idx, w) ** 2, w)
    check_second_grad(lambda w: F.embedding(idx, w, padding_idx=1) ** 2, w)


def test_embedding_init_and_repr():
    ember.manual_seed(0)
    m = nn.Embedding(200, 50, padding_idx=3)
    w = m.weight.detach().numpy()
    assert (w[3] == 0).all()
    assert abs(np.delete(w, 3, 0).std() - 1) < 0.03  # N(0, 1)
    assert repr(m) == "Embedding(200, 50, padding_idx=3)"
    assert nn.Embedding(5, 2, padding_idx=-2).padding_idx == 3
    assert repr(nn.Embedding(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)) == \
        "Embedding(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)"
    assert nn.Embedding.from_pretrained(ember.ones(2, 2)).weight.requires_grad is False


def test_embedding_scale_grad_by_freq_and_max_norm():
    w = ember.ones(4, 2, requires_grad=True)
    F.embedding(ember.tensor([1, 1, 1, 2]), w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[0, 0], [1, 1], [1, 1], [0, 0]])
    w = ember.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    F.embedding(ember.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(w.numpy(), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-6)


def test_embedding_errors():
    m = nn.Embedding(5, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        m(ember.tensor([5]))
    with pytest.raises(IndexError, match="index out of range in self"):
        m(ember.tensor([-1]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have "
                                           "one of the following scalar types: Long, Int; but "
                                           "got torch.FloatTensor instead"):
        m(ember.tensor([1.0]))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=5)
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be "
                                             "2-dimensional"):
        nn.Embedding.from_pretrained(ember.ones(3))


# ---- pad / one_hot / normalize -------------------------------------------------------------
def test_pad_values():
    x = ember.tensor([[1.0, 2.0, 3.0]])
    assert F.pad(x, (1, 2)).tolist() == [[0, 1, 2, 3, 0, 0]]
    assert F.pad(x, (1, 0, 1, 0), value=-1.0).tolist() == [[-1, -1, -1, -1], [-1, 1, 2, 3]]
    assert F.pad(x, (-1, 1)).tolist() == [[2, 3, 0]]
    assert F.pad(x, (2, 2), mode="reflect").tolist() == [[3, 2, 1, 2, 3, 2, 1]]
    assert F.pad(x, (2, 1), mode="replicate").tolist() == [[1, 1, 1, 2, 3, 3]]
    assert F.pad(x, (2, 1), mode="circular").tolist() == [[2, 3, 1, 2, 3, 1]]


@pytest.mark.parametrize("pad,mode", [((1, 2), "constant"), ((-1, 2, 1, 0), "constant"),
                                      ((2, 1), "reflect"), ((1, 1, 1, 2), "reflect"),
                                      ((2, 3), "replicate"), ((2, 1, 1, 0), "circular")])
def test_pad_grads(pad, mode):
    check_grad(lambda x: F.pad(x, pad, mode), rnd(2, 3, 4))
    check_second_grad(lambda x: F.pad(x, pad, mode) ** 2, rnd(1, 3, 3))


def test_pad_errors():
    x = ember.zeros(1, 2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding "
                                           "input dimension, but got: padding \\(3, 3\\) at "
                                           "dimension 2 of input \\[1, 2, 3\\]"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D"):
        F.pad(ember.zeros(3), (1, 1), mode="reflect")


def test_one_hot():
    assert F.one_hot(ember.tensor([0, 2, 1])).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    out = F.one_hot(ember.tensor([[1], [0]]), 4)
    assert out.shape == (2, 1, 4) and out.dtype is ember.int64
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(ember.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(ember.tensor([-1]))


def test_normalize_values():
    x = ember.tensor([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(F.normalize(x).numpy(), [[0.6, 0.8], [0, 0]])
    np.testing.assert_allclose(F.normalize(x, p=1, dim=1).numpy(), [[3 / 7, 4 / 7], [0, 0]])
    np.testing.assert_allclose(F.normalize(x, dim=0, eps=10.0).numpy(), [[0.3, 0.4], [0, 0]])


# ---- init ----------------------------------------------------------------------------------
def test_init_formulas():
    ember.manual_seed(0)
    w = ember.empty(300, 200)
    init.xavier_uniform_(w, gain=2.0)
    a = 2.0 * math.sqrt(6 / 500)
    assert w.abs().max().item() <= a and w.abs().max().item() > 0.99 * a
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.std().item() / math.sqrt(2 / 300) - 1) < 0.02
    init.trunc_normal_(w, mean=0.5, std=1.0, a=0.0, b=1.0)
    assert w.min().item() >= 0.0 and w.max().item() <= 1.0
    assert abs(w.mean().item() - 0.5) < 0.01
    assert init.calculate_gain("leaky_relu", 0.5) == math.sqrt(2 / 1.25)
    assert init._calculate_fan_in_and_fan_out(ember.empty(4, 3, 2, 5)) == (30, 40)
    q = init.orthogonal_(ember.empty(3, 2, 4, dtype=ember.float64), gain=3.0).reshape(3, 8)
    np.testing.assert_allclose((q @ q.t()).numpy(), 9 * np.eye(3), atol=1e-12)
    assert init.eye_(ember.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]


def test_init_errors():
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor "
                                         "with fewer than 2 dimensions"):
        init.kaiming_uniform_(ember.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of "
                                         "\\['fan_in', 'fan_out'\\]"):
        init.kaiming_normal_(ember.empty(2, 2), mode="fan_avg")
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(ember.empty(3))


def test_init_does_not_record_graph():
    p = nn.Parameter(ember.empty(4, 4))
    init.normal_(p)
    init.orthogonal_(p)
    assert p.is_leaf and p.grad_fn is None


def test_trunc_normal_without_scipy_erfinv():
    from ember._ops.init_ops import _erfinv_numpy
    ys = np.array([-0.999, -0.5, 0.0, 0.3, 0.9999])
    xs = _erfinv_numpy(ys)
    np.testing.assert_allclose([math.erf(v) for v in xs], ys, rtol=1e-12, atol=1e-14)


# ---- utils -----------------------------------------------------------------------------------
def test_clip_grad_norm_hand_computed():
    a = ember.zeros(2, requires_grad=True)
    b = ember.zeros(1, requires_grad=True)
    a.grad, b.grad = ember.tensor([3.0, 0.0]), ember.tensor([4.0])
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert abs(total.item() - 5.0) < 1e-6
    coef = 1.0 / (5.0 + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), [3 * coef, 0], rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), [4 * coef], rtol=1e-6)
    total = nn.utils.clip_grad_norm_([a, b], 10.0, norm_type="inf")  # no scaling above norm
    assert abs(total.item() - 4 * coef) < 1e-6
    np.testing.assert_allclose(b.grad.numpy(), [4 * coef], rtol=1e-6)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    b.grad = ember.tensor([float("inf")])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        nn.utils.clip_grad_norm_([a, b], 1.0, error_if_nonfinite=True)


def test_clip_grad_value_and_vector_conversion():
    a = ember.zeros(3, requires_grad=True)
    a.grad = ember.tensor([-2.0, 0.1, 5.0])
    nn.utils.clip_grad_value_(a, 0.5)
    np.testing.assert_allclose(a.grad.numpy(), [-0.5, 0.1, 0.5], rtol=1e-7)
    m = nn.Linear(2, 3)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (9,)
    np.testing.assert_array_equal(v[:6].detach().numpy(), m.weight.detach().numpy().ravel())
    nn.utils.vector_to_parameters(ember.arange(9.0), m.parameters())
    assert m.bias.tolist() == [6.0, 7.0, 8.0] and m.weight.is_leaf
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], m.parameters())
