"""ember._check and its siblings raise what torch._check & co. raise."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import error_of

CASES = {
    "check_false": lambda lib: lib._check(False),
    "check_message": lambda lib: lib._check(1 > 2, lambda: "one is not above two"),
    "check_true": lambda lib: lib._check(True, "not called, so never checked"),
    "check_int": lambda lib: lib._check(1),
    "check_numpy_bool": lambda lib: lib._check(np.True_),
    "check_tensor": lambda lib: lib._check(lib.tensor(True)),
    "check_not_callable": lambda lib: lib._check(False, "a str"),
    "check_number_message": lambda lib: lib._check(False, lambda: 5),
    "value": lambda lib: lib._check_value(False, lambda: "bad value"),
    "value_default": lambda lib: lib._check_value(False),
    "type": lambda lib: lib._check_type(False),
    "index": lambda lib: lib._check_index(False, lambda: "index 4 is out of bounds"),
    "not_implemented": lambda lib: lib._check_not_implemented(False),
    "with": lambda lib: lib._check_with(KeyError, False, lambda: "missing"),
    "with_not_an_exception": lambda lib: lib._check_with(int, False, None),
    "with_a_warning": lambda lib: lib._check_with(UserWarning, False, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_checks_raise_like_torch(case):
    fn = CASES[case]
    assert error_of(lambda: fn(ember)) == error_of(lambda: fn(torch))
