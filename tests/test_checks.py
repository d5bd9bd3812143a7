"""ember._check & co.: PyTorch's exception classes and texts (see tests/parity/test_checks.py)."""
import pytest

import ember

DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? "
           "If so, please report an enhancement request to PyTorch.)")


@pytest.mark.parametrize("check, error", [(ember._check, RuntimeError),
                                          (ember._check_value, ValueError),
                                          (ember._check_type, TypeError),
                                          (ember._check_index, IndexError),
                                          (ember._check_not_implemented, NotImplementedError)])
def test_each_check_raises_its_class(check, error):
    assert check(True) is None
    with pytest.raises(error) as info:
        check(False)
    assert type(info.value) is error and str(info.value) == DEFAULT
    with pytest.raises(error, match="^shapes differ: 2 vs 3$"):
        check(False, lambda: f"shapes differ: {2} vs {3}")


def test_condition_must_be_a_python_bool():
    with pytest.raises(TypeError, match=r"^cond must be a bool, but got <class 'int'>$"):
        ember._check(1)
    with pytest.raises(TypeError, match=r"^cond must be a bool, but got a Tensor\. For tensor "):
        ember._check(ember.tensor(True))


def test_check_with_takes_an_exception_class():
    with pytest.raises(KeyError):
        ember._check_with(KeyError, False, lambda: "k")
    with pytest.raises(AssertionError, match="^error_type must be a subclass of Exception but "
                                             "not Warning, got <class 'int'>$"):
        ember._check_with(int, False, None)
    with pytest.raises(TypeError, match="^message must be a callable$"):
        ember._check(False, "a str")
