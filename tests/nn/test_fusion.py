"""nn.utils.fusion (conv/linear + eval BatchNorm folded), stateless.functional_call, the
weight memory-format converters, and the deprecated spellings in nn.init / nn.utils."""
import warnings

import pytest

import ember
from ember import nn
from ember.nn.utils import fusion


def _eval_bn(cls, n, dtype):
    bn = cls(n).to(dtype)
    with ember.no_grad():  # statistics and affine parameters that are not the identity
        bn.running_mean.copy_(ember.linspace(-1, 1, n, dtype=dtype))
        bn.running_var.copy_(ember.linspace(0.5, 2, n, dtype=dtype))
        bn.weight.copy_(ember.linspace(0.3, 1.7, n, dtype=dtype))
        bn.bias.copy_(ember.linspace(-0.2, 0.4, n, dtype=dtype))
    return bn.eval()


@pytest.mark.parametrize("conv_cls,bn_cls,x_shape,transpose", [
    (nn.Conv1d, nn.BatchNorm1d, (2, 3, 7), False),
    (nn.Conv2d, nn.BatchNorm2d, (2, 3, 6, 5), False),
    (nn.ConvTranspose2d, nn.BatchNorm2d, (2, 3, 4, 4), True),
])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_conv_matches_conv_then_bn(conv_cls, bn_cls, x_shape, transpose, bias):
    ember.manual_seed(0)
    conv = conv_cls(3, 4, 3, bias=bias).double().eval()
    bn = _eval_bn(bn_cls, 4, ember.float64)
    fused = fusion.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    assert fused is not conv and isinstance(fused.weight, nn.Parameter)
    assert fused.bias is not None and fused.weight.dtype == ember.float64
    x = ember.randn(*x_shape, dtype=ember.float64)
    ember.testing.assert_close(fused(x), bn(conv(x)))
    assert (conv.bias is None) == (not bias)  # the original is untouched


def test_fused_linear_matches_linear_then_bn():
    ember.manual_seed(0)
    lin = nn.Linear(5, 4).double().eval()
    bn = _eval_bn(nn.BatchNorm1d, 4, ember.float64)
    x = ember.randn(3, 5, dtype=ember.float64)
    ember.testing.assert_close(fusion.fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)))


def test_fusion_errors():
    conv, bn = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fusion.fuse_conv_bn_eval(conv, bn)
    bn_nostats = nn.BatchNorm2d(2, track_running_stats=False).eval()
    with pytest.raises(AssertionError, match="must not be None"):
        fusion.fuse_conv_bn_eval(conv.eval(), bn_nostats)
    with pytest.raises(AssertionError, match="linear.out_features=3 and bn.num_features=2"):
        fusion.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval())


def test_fuse_weights_keep_dtypes_and_requires_grad():
    w, b = fusion.fuse_conv_bn_weights(ember.ones(2, 1, 1), None, ember.zeros(2),
                                       ember.full((2,), 3.0), 1.0, None, None)
    assert w.flatten().tolist() == [0.5, 0.5] and b.tolist() == [0.0, 0.0]
    assert not w.requires_grad and not b.requires_grad
    w, b = fusion.fuse_linear_bn_weights(ember.ones(2, 3, requires_grad=True),
                                         ember.ones(2, dtype=ember.float64), ember.ones(2),
                                         ember.full((2,), 3.0), 1.0, ember.ones(2),
                                         ember.zeros(2))
    assert w.requires_grad and w.dtype == ember.float32 and b.dtype == ember.float64
    assert b.tolist() == [0.0, 0.0]


def test_exported_from_nn_utils():
    for name in fusion.__all__:
        assert getattr(nn.utils, name) is getattr(fusion, name)


def test_stateless_functional_call_is_deprecated():
    lin = nn.Linear(2, 1)
    new = {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        out = nn.utils.stateless.functional_call(lin, new, (ember.ones(2),))
    assert out.tolist() == [2.0]


def test_convert_weight_memory_format():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Sequential(nn.Conv3d(1, 1, 1)))
    w = m[0].weight
    assert nn.utils.convert_conv2d_weight_memory_format(m, ember.contiguous_format) is m
    assert m[0].weight is w and m[0].weight.is_contiguous()
    assert nn.utils.convert_conv3d_weight_memory_format(m, ember.contiguous_format) is m
    nn.utils.convert_conv2d_weight_memory_format(m, ember.channels_last)
    assert m[0].weight.is_contiguous(memory_format=ember.channels_last)
    assert m[0].weight.stride() == (9, 1, 3, 1)


def test_deprecated_spellings_warn_and_work():
    t = ember.empty(3, 3)
    with pytest.warns(FutureWarning, match="`nn.init.constant` is now deprecated in favor of "
                                           "`nn.init.constant_`"):
        assert nn.init.constant(t, 2.0) is t
    assert t.eq(2.0).all()
    with pytest.warns(FutureWarning, match="nn.init.eye_"):
        nn.init.eye(t)
    assert ember.equal(t, ember.eye(3))
    for name in ("uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                 "kaiming_normal", "orthogonal"):
        with pytest.warns(FutureWarning, match=f"nn.init.{name}_"):
            getattr(nn.init, name)(t)
    with pytest.warns(FutureWarning):
        nn.init.sparse(ember.empty(4, 2), 0.5)
    with pytest.warns(FutureWarning):
        nn.init.dirac(ember.empty(2, 2, 3))
    p = nn.Parameter(ember.ones(2))
    p.grad = ember.ones(2)
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        total = nn.utils.clip_grad_norm([p], 1.0)
    assert abs(total.item() - 2 ** 0.5) < 1e-6


def test_aliases_do_not_warn_on_underscore_forms():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.init.normal_(ember.empty(2))
