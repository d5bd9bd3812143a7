"""ember.testing: assert_close's verdicts and messages (the expected texts are PyTorch 2.13's,
with ember's names), make_tensor's ranges, dtypes, shapes and contiguity, assert_allclose."""
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.testing import assert_allclose, assert_close, make_tensor

NAN, INF = float("nan"), float("inf")


def message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


# ---- assert_close: passing ------------------------------------------------------------------

@pytest.mark.parametrize("actual, expected, kwargs", [
    (ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-6]), {}),  # within float32's
    (ember.tensor([1.0], dtype=ember.float64), ember.tensor([1.0 + 1e-8], dtype=ember.float64), {}),
    (ember.tensor([1.0], dtype=ember.float16), ember.tensor([1.0009765625], dtype=ember.float16),
     {}),
    (ember.tensor([INF, -INF]), ember.tensor([INF, -INF]), {}),  # equal infinities are close
    (ember.tensor([NAN, 1.0]), ember.tensor([NAN, 1.0]), {"equal_nan": True}),
    (ember.tensor([complex(NAN, 0)]), ember.tensor([complex(NAN, 0)]), {"equal_nan": True}),
    (ember.tensor([1, 2]), ember.tensor([1, 3]), {"rtol": 0, "atol": 1}),
    (ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.2]), {"rtol": 0.1, "atol": 0}),
    (ember.tensor([1.0], dtype=ember.float16), ember.tensor([1.0005]), {"check_dtype": False}),
    (ember.zeros(0), ember.zeros(0), {}),
    (ember.zeros(2, requires_grad=True), ember.zeros(2), {}),
    (ember.nn.Parameter(ember.zeros(2)), ember.zeros(2), {}),
    (np.array([1.0, 2.0]), np.array([1.0, 2.0]), {}),
    (1.0, 1.0 + 1e-8, {}), (1, 1, {}), (True, np.bool_(True), {}), (None, None, {}),
    (1.0, 1, {"check_dtype": False}), (np.float32(1.0), 1.0, {}), (1 + 2j, 1 + 2j, {}),
    (INF, INF, {}), (NAN, NAN, {"equal_nan": True}), (1.0, 1.1, {"rtol": 0, "atol": 0.2}),
    ([1, (2.0, ember.tensor(3.0))], (1, [2.0, ember.tensor(3.0)]), {}),
    (OrderedDict(a=1, b=[ember.ones(2)]), {"b": [ember.ones(2)], "a": 1}, {}),
    (ember.zeros(2, device="meta"), ember.ones(2, device="meta"), {}),  # meta: no values
    (ember.zeros(2, device="meta"), ember.ones(2), {"check_device": False}),
])
def test_close_inputs_pass(actual, expected, kwargs):
    assert_close(actual, expected, **kwargs)


def test_integers_in_the_default_dtype():
    # integers are compared as float32 values: 2**24 + 1 is 2**24 there
    assert_close(ember.tensor([16777217]), ember.tensor([16777216]), rtol=0, atol=0.5)
    # and an int8 difference does not wrap
    with pytest.raises(AssertionError):
        assert_close(ember.tensor([127], dtype=ember.int8), ember.tensor([-128], dtype=ember.int8),
                     rtol=0, atol=2)


# ---- assert_close: the messages -------------------------------------------------------------

CLOSE_F32 = ("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
             "Greatest absolute difference: 0.09999990463256836 at index (1,) (up to 1e-05 "
             "allowed)\nGreatest relative difference: 0.04761900380253792 at index (1,) (up to "
             "1.3e-06 allowed)")


@pytest.mark.parametrize("fn, expected", [
    (lambda: assert_close(ember.tensor([1., 2., 3.]), ember.tensor([1., 2.1, 3.])),
     ("AssertionError", CLOSE_F32)),
    (lambda: assert_close(ember.tensor([1, 2, 3]), ember.tensor([1, 5, 3])),
     ("AssertionError", "Tensor-likes are not equal!\n\nMismatched elements: 1 / 3 (33.3%)\n"
      "Greatest absolute difference: 3 at index (1,)\nGreatest relative difference: "
      "0.6000000238418579 at index (1,)")),
    (lambda: assert_close(ember.tensor([True, False]), ember.tensor([True, True])),
     ("AssertionError", "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
      "Greatest absolute difference: 1 at index (1,)\nGreatest relative difference: 1.0 at "
      "index (1,)")),
    (lambda: assert_close(ember.tensor([1., 2., 3.], dtype=ember.half),
                          ember.tensor([1., 2.1, 3.], dtype=ember.half)),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
      "Greatest absolute difference: 0.099609375 at index (1,) (up to 1e-05 allowed)\n"
      "Greatest relative difference: 0.047454833984375 at index (1,) (up to 0.001 allowed)")),
    (lambda: assert_close(ember.tensor([1., 2., 3.], dtype=ember.bfloat16),
                          ember.tensor([1., 2.1, 3.], dtype=ember.bfloat16)),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
      "Greatest absolute difference: 0.09375 at index (1,) (up to 1e-05 allowed)\n"
      "Greatest relative difference: 0.044677734375 at index (1,) (up to 0.016 allowed)")),
    (lambda: assert_close(ember.tensor([1 + 1j, 2]), ember.tensor([1 + 1j, 2.1 + 1j])),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
      "Greatest absolute difference: 1.0049875974655151 at index (1,) (up to 1e-05 allowed)\n"
      "Greatest relative difference: 0.43207791447639465 at index (1,) (up to 1.3e-06 "
      "allowed)")),
    (lambda: assert_close(ember.tensor([1., 9., NAN, NAN]), ember.tensor([2., 1., 1., NAN])),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 4 / 4 (100.0%)\n"
      "Greatest absolute difference: nan at index (2,) (up to 1e-05 allowed)\n"
      "Greatest relative difference: nan at index (2,) (up to 1.3e-06 allowed)")),
    (lambda: assert_close(ember.tensor([0., 1.]), ember.tensor([1., 0.])),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 2 / 2 (100.0%)\n"
      "Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed)\n"
      "Greatest relative difference: inf at index (1,) (up to 1.3e-06 allowed)")),
    (lambda: assert_close(ember.tensor([[1., 2., 3.], [4., 5., 6.]]),
                          ember.tensor([[1., 2., 3.], [4., 5.5, 6.]])),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 6 (16.7%)\n"
      "Greatest absolute difference: 0.5 at index (1, 1) (up to 1e-05 allowed)\n"
      "Greatest relative difference: 0.09090909361839294 at index (1, 1) (up to 1.3e-06 "
      "allowed)")),
    (lambda: assert_close(ember.tensor([1, 2]), ember.tensor([1, 4]), rtol=0, atol=1),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
      "Greatest absolute difference: 2 at index (1,) (up to 1 allowed)\n"
      "Greatest relative difference: 0.5 at index (1,) (up to 0 allowed)")),
    (lambda: assert_close(ember.tensor([2 ** 62, 0]), ember.tensor([-2 ** 62, 0])),
     ("AssertionError", "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
      "Greatest absolute difference: 0 at index (1,)\nGreatest relative difference: 0.0 at "
      "index (1,)")),  # PyTorch's int64 difference wraps around, and so is reported
    (lambda: assert_close(ember.tensor(1.5), ember.tensor(2.0)),
     ("AssertionError", "Scalars are not close!\n\nExpected 2.0 but got 1.5.\nAbsolute "
      "difference: 0.5 (up to 1e-05 allowed)\nRelative difference: 0.25 (up to 1.3e-06 "
      "allowed)")),
    (lambda: assert_close(ember.tensor(True), ember.tensor(False)),
     ("AssertionError", "Scalars are not equal!\n\nExpected False but got True.\nAbsolute "
      "difference: 1\nRelative difference: inf")),
    (lambda: assert_close(ember.tensor(1.1, dtype=ember.bfloat16),
                          ember.tensor(1.2, dtype=ember.bfloat16)),
     ("AssertionError", "Scalars are not close!\n\nExpected 1.203125 but got 1.1015625.\n"
      "Absolute difference: 0.1015625 (up to 1e-05 allowed)\nRelative difference: "
      "0.08441558441558442 (up to 0.016 allowed)")),
    (lambda: assert_close(1, 1.0),
     ("AssertionError", "The (d)types do not match: <class 'int'> != <class 'float'>.")),
    (lambda: assert_close(1, 1.5, check_dtype=False),
     ("AssertionError", "Scalars are not close!\n\nExpected 1.5 but got 1.\nAbsolute "
      "difference: 0.5 (up to 1e-07 allowed)\nRelative difference: 0.3333333333333333 (up to "
      "1e-07 allowed)")),
    (lambda: assert_close(INF, -INF),
     ("AssertionError", "Scalars are not close!\n\nExpected -inf but got inf.\nAbsolute "
      "difference: inf (up to 1e-07 allowed)\nRelative difference: nan (up to 1e-07 "
      "allowed)")),
    (lambda: assert_close(1 + 2j, 1 + 2.1j),
     ("AssertionError", "Scalars are not close!\n\nExpected (1+2.1j) but got (1+2j).\n"
      "Absolute difference: 0.10000000000000009 (up to 1e-07 allowed)\nRelative difference: "
      "0.04299335803923481 (up to 1e-07 allowed)")),
    (lambda: assert_close(np.float32(1.0), np.float32(1.1)),
     ("AssertionError", "Scalars are not close!\n\nExpected 1.100000023841858 but got 1.0.\n"
      "Absolute difference: 0.10000002384185791 (up to 1e-07 allowed)\nRelative difference: "
      "0.09090911061310529 (up to 1e-07 allowed)")),
    (lambda: assert_close(True, False),
     ("AssertionError", "Booleans mismatch: True is not False")),
    (lambda: assert_close(None, 1), ("AssertionError", "None mismatch: None is not 1")),
    (lambda: assert_close(ember.zeros(2), ember.zeros(3)),
     ("AssertionError", "The values for attribute 'shape' do not match: ember.Size([2]) != "
      "ember.Size([3]).")),
    (lambda: assert_close(ember.zeros(2), ember.zeros(2, dtype=ember.float64)),
     ("AssertionError", "The values for attribute 'dtype' do not match: ember.float32 != "
      "ember.float64.")),
    (lambda: assert_close(ember.zeros(2, 3).t(), ember.zeros(3, 2), check_stride=True),
     ("AssertionError", "The values for attribute 'stride()' do not match: (1, 3) != (2, 1).")),
    (lambda: assert_close(ember.zeros(2, device="meta"), ember.ones(2)),
     ("AssertionError", "The values for attribute 'device' do not match: meta != cpu.")),
    (lambda: assert_close(ember.tensor([1., 2.]), ember.tensor([1., 2.0001], dtype=ember.float64),
                          check_dtype=False),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
      "Greatest absolute difference: 0.00010000000000021103 at index (1,) (up to 1e-05 "
      "allowed)\nGreatest relative difference: 4.9997500125099255e-05 at index (1,) (up to "
      "1.3e-06 allowed)")),
    (lambda: assert_close(1.0, 1.0, rtol=1e-3, msg="ignored"),
     ("ValueError", "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
      "atol.")),
    (lambda: assert_close([1.0], [1.0], atol=1e-3),
     ("ValueError", "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
      "rtol.\n\nThe failure occurred for item [0]")),
    (lambda: assert_close("a", "a"),
     ("TypeError", "No comparison pair was able to handle inputs of type <class 'str'> and "
      "<class 'str'>.")),
    (lambda: assert_close(ember.tensor([1.]), np.array([1.])),
     ("TypeError", "No comparison pair was able to handle inputs of type <class "
      "'ember._tensor.Tensor'> and <class 'numpy.ndarray'>.")),
    (lambda: assert_close(ember.nn.Parameter(ember.zeros(2)), ember.zeros(2),
                          allow_subclasses=False),
     ("TypeError", "No comparison pair was able to handle inputs of type <class "
      "'ember.nn.parameter.Parameter'> and <class 'ember._tensor.Tensor'>.")),
    # a length mismatch is found while walking the inputs, before any value is compared
    (lambda: assert_close([ember.tensor(1.), [1]], [ember.tensor(2.), [1, 2]], msg="ignored"),
     ("AssertionError", "The length of the sequences mismatch: 1 != 2\n\nThe failure occurred "
      "for item [1]")),
    (lambda: assert_close({"a": 1, "b": 2}, {"a": 1, "c": 3}),
     ("AssertionError", "The keys of the mappings do not match:\nMissing keys in the actual "
      "mapping: ['c']\nAdditional keys in the actual mapping: ['b']")),
    (lambda: assert_close({"a": [1, 2]}, {"a": [1, 3]}, msg=lambda m: "X" + m + "Y"),
     ("AssertionError", "XScalars are not equal!\n\nExpected 3 but got 2.\nAbsolute "
      "difference: 1\nRelative difference: 0.3333333333333333\n\nThe failure occurred for "
      "item ['a'][1]Y")),
    (lambda: assert_close({"a": [1, 2]}, {"a": [1, 3]}, msg="custom"),
     ("AssertionError", "custom")),
    (lambda: assert_close([[1, [ember.tensor([1.])]]], [[1, [ember.tensor([2.])]]]),
     ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 1 (100.0%)\n"
      "Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed)\n"
      "Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed)\n\n"
      "The failure occurred for item [0][1][0]")),
    (lambda: assert_close(ember.Size([2]), ember.Size([3])),
     ("AssertionError", "Scalars are not equal!\n\nExpected 3 but got 2.\nAbsolute difference: "
      "1\nRelative difference: 0.3333333333333333\n\nThe failure occurred for item [0]")),
])
def test_close_messages(fn, expected):
    assert message(fn) == expected


def test_message_percentages_round_to_one_decimal():
    _, text = message(lambda: assert_close(ember.ones(3000),
                                           ember.cat([ember.zeros(1), ember.ones(2999)])))
    assert "Mismatched elements: 1 / 3000 (0.0%)" in text
    _, text = message(lambda: assert_close(ember.ones(7), ember.tensor([1.] * 6 + [2.])))
    assert "Mismatched elements: 1 / 7 (14.3%)" in text


def test_negative_tolerances_fail_as_in_pytorch():
    with pytest.raises(RuntimeError, match="^Comparing") as info:
        assert_close(ember.tensor([1.]), ember.tensor([1.]), rtol=-1, atol=-1)
    assert str(info.value.__cause__) == "rtol must be greater than or equal to zero, but got -1"


def test_bool_against_a_number_fails_as_in_pytorch():
    with pytest.raises(RuntimeError, match=r"^Originating a NumberPair\(\) at item  with"):
        assert_close(True, 1)


def test_each_pair_is_compared_before_the_first_failure_is_raised():
    # PyTorch compares every pair, so an unexpected error in a later one wins
    with pytest.raises(RuntimeError):
        assert_close([ember.tensor([1.]), ember.tensor([1.])],
                     [ember.tensor([2.]), ember.tensor([1.])], rtol=-1, atol=0)


def test_fake_cuda_tensors_are_compared_on_the_host(fake_cuda):
    x = ember.tensor([1.0, 2.0], device="cuda")
    assert_close(x, ember.tensor([1.0, 2.0], device="cuda"))
    _, text = message(lambda: assert_close(x, ember.tensor([1.0, 2.5], device="cuda")))
    assert "Greatest absolute difference: 0.5 at index (1,)" in text
    _, text = message(lambda: assert_close(x, ember.tensor([1.0, 2.0])))
    assert text == f"The values for attribute 'device' do not match: {x.device} != cpu."
    assert_close(x, ember.tensor([1.0, 2.0]), check_device=False)


# ---- assert_allclose ------------------------------------------------------------------------

def test_assert_allclose_is_deprecated_and_loose():
    with pytest.warns(FutureWarning, match=r"assert_allclose\(\)` is deprecated since 1.12"):
        assert_allclose(ember.tensor([1.0, NAN]), [1.00001, NAN])  # rtol 1e-4, NaNs equal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert_allclose(ember.tensor([1, 2]), [1.0, 2.0])  # dtypes not checked
        with pytest.raises(AssertionError, match="up to 0.0001 allowed"):
            assert_allclose([1., 2.], [1., 2.1])
        with pytest.raises(AssertionError, match="^m$"):
            assert_allclose(1.0, 1.1, msg="m")
        with pytest.raises(ValueError, match="but got no atol"):
            assert_allclose(1.0, 1.0001, rtol=1e-3)


# ---- make_tensor ----------------------------------------------------------------------------

FLOATS = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
INTS = [ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64]


@pytest.mark.parametrize("dtype", FLOATS + INTS + [ember.complex64, ember.complex128, ember.bool])
def test_make_tensor_dtype_shape_default_range(dtype):
    ember.manual_seed(0)
    t = make_tensor(40, 5, dtype=dtype, device="cpu")
    assert t.dtype is dtype and t.shape == (40, 5) and t.is_contiguous()
    values = t.numpy().astype(np.complex128 if dtype.is_complex else np.float64)
    if dtype is ember.bool:
        assert set(np.unique(values)) == {0.0, 1.0}
    elif dtype in INTS:
        low = 0 if dtype is ember.uint8 else -9
        assert values.min() >= low and values.max() <= 9
        assert np.array_equal(values, np.round(values))
    else:
        for part in ((values.real, values.imag) if dtype.is_complex else (values.real,)):
            assert part.min() >= -9 and part.max() <= 9 and np.unique(part).size > 50


@pytest.mark.parametrize("shape, expected", [((), ()), ((3,), (3,)), (((2, 3),), (2, 3)),
                                             (([2, 3],), (2, 3)), ((ember.Size([4, 1]),), (4, 1)),
                                             ((2, 0), (2, 0))])
def test_make_tensor_shapes(shape, expected):
    assert make_tensor(*shape, dtype=ember.float32, device="cpu").shape == expected


@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, ember.complex64, ember.bool])
def test_make_tensor_noncontiguous(dtype):
    t = make_tensor(3, 4, dtype=dtype, device="cpu", noncontiguous=True)
    assert t.shape == (3, 4) and not t.is_contiguous() and t.stride() == (8, 2)
    # one element (or none) can't be non-contiguous: PyTorch returns it contiguous
    assert make_tensor(1, 1, dtype=dtype, device="cpu", noncontiguous=True).is_contiguous()
    assert make_tensor(0, 3, dtype=dtype, device="cpu", noncontiguous=True).is_contiguous()


def test_make_tensor_low_high_and_clamping():
    t = make_tensor(500, dtype=ember.float64, device="cpu", low=2.5, high=3.0)
    assert t.min().item() >= 2.5 and t.max().item() < 3.0
    t = make_tensor(500, dtype=ember.int32, device="cpu", low=1.2, high=3.5)  # ceiled: [2, 4)
    assert set(t.tolist()) == {2, 3}
    t = make_tensor(500, dtype=ember.uint8, device="cpu", low=-100, high=2)  # clamped to 0
    assert set(t.tolist()) == {0, 1}
    t = make_tensor(100, dtype=ember.float32, device="cpu", low=-INF, high=INF)  # finite range
    assert bool(ember.isfinite(t).all())
    t = make_tensor(200, dtype=ember.int64, device="cpu", low=-2 ** 70, high=2 ** 70)
    assert t.dtype is ember.int64
    t = make_tensor(100, dtype=ember.bool, device="cpu", low=1)
    assert bool(t.all())


def test_make_tensor_exclude_zero_and_requires_grad():
    t = make_tensor(200, dtype=ember.int8, device="cpu", low=0, high=2, exclude_zero=True)
    assert set(t.tolist()) == {1}
    t = make_tensor(50, dtype=ember.float16, device="cpu", low=0, high=1e-9, exclude_zero=True)
    assert set(t.tolist()) == {ember.finfo(ember.float16).tiny}
    t = make_tensor(3, dtype=ember.float32, device="cpu", requires_grad=True, noncontiguous=True)
    assert t.requires_grad and t.is_leaf
    (t * 2).sum().backward()
    assert t.grad.tolist() == [2.0, 2.0, 2.0]
    assert not make_tensor(3, dtype=ember.float32, device="cpu").requires_grad
    t = make_tensor(3, dtype=ember.complex64, device="cpu", requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_make_tensor_same_seed_same_values():
    ember.manual_seed(7)
    a = make_tensor(5, dtype=ember.float32, device="cpu")
    ember.manual_seed(7)
    assert make_tensor(5, dtype=ember.float32, device="cpu").tolist() == a.tolist()


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(dtype=ember.float32, low=2, high=1), ValueError,
     "`low` must be less than `high`, but got 2 >= 1"),
    (dict(dtype=ember.int64, low=3, high=3), ValueError,
     "`low` must be less than `high`, but got 3 >= 3"),
    (dict(dtype=ember.float32, low=NAN), ValueError,
     "`low` and `high` cannot be NaN, but got low=nan and high=9"),
    (dict(dtype=ember.uint8, low=-5, high=-1), ValueError,
     "The value interval specified by `low` and `high` is [-5, -1), but ember.uint8 only "
     "supports [0, 256)"),
    (dict(dtype=ember.bool, low=2, high=3), ValueError,
     "The value interval specified by `low` and `high` is [2, 3), but ember.bool only "
     "supports [0, 2)"),
    (dict(dtype=ember.int32, requires_grad=True), ValueError,
     "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
     "dtype=ember.int32"),
    (dict(dtype=ember.float32, noncontiguous=True, memory_format=ember.contiguous_format),
     ValueError, "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
     "but got noncontiguous=True and memory_format=torch.contiguous_format"),
    (dict(dtype=None), TypeError,
     "The requested dtype 'None' is not supported by torch.testing.make_tensor()."),
])
def test_make_tensor_errors(kwargs, error, text):
    with pytest.raises(error, match="^" + re.escape(text)):
        make_tensor(2, 3, device="cpu", **kwargs)


def test_make_tensor_memory_format():
    t = make_tensor(2, 3, dtype=ember.float32, device="cpu", memory_format=ember.contiguous_format)
    assert t.is_contiguous() and t.shape == (2, 3)
    t = make_tensor(1, 2, 3, 4, dtype=ember.float32, device="cpu",
                    memory_format=ember.channels_last)
    assert t.stride() == (24, 1, 8, 2)  # PyTorch's channels-last strides


def test_make_tensor_low_equal_high_warns_for_floats():
    with pytest.warns(FutureWarning, match=r"Passing `low==high`"):
        t = make_tensor(3, dtype=ember.float32, device="cpu", low=1.5, high=1.5)
    assert t.tolist() == [1.5, 1.5, 1.5]


def test_make_tensor_on_devices(fake_cuda):
    t = make_tensor(2, 3, dtype=ember.float32, device="cuda", noncontiguous=True)
    assert t.device.type == "cuda" and not t.is_contiguous()
    assert make_tensor(2, dtype=ember.int64, device="meta").device.type == "meta"


def test_lazy_submodule():
    import ember.testing as testing
    assert ember.testing is testing and testing.__all__ == ["assert_close", "make_tensor",
                                                           "assert_allclose"]
