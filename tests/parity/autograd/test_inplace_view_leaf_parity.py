"""In-place ops on views of leaves: PyTorch refuses them when the leaf requires grad and
when the view itself was made to require grad; a view of a plain tensor written with a
value that requires grad is fine and differentiable."""
import torch

import ember
from tests.parity.compare import error_of


def _cases(lib):
    def view_made_to_require_grad():
        a = lib.ones(4).reshape(2, 2)
        a.requires_grad_()
        a.abs_()

    def view_of_leaf():
        b = lib.ones(4, requires_grad=True)
        b[:2].mul_(2)

    def view_under_no_grad():
        b = lib.ones(4, requires_grad=True)
        with lib.no_grad():
            b[:2].mul_(2)
        return b.tolist()

    def view_of_plain_tensor():
        x = lib.zeros(4)
        v = x[:2]
        y = lib.ones(2, requires_grad=True)
        v.add_(y)
        v.mul_(2)
        x.sum().backward()
        return y.grad.tolist()
    return [view_made_to_require_grad, view_of_leaf, view_under_no_grad, view_of_plain_tensor]


def test_inplace_on_views_of_leaves():
    for t_case, e_case in zip(_cases(torch), _cases(ember)):
        assert error_of(e_case) == error_of(t_case)
        if error_of(t_case) is None:
            assert e_case() == t_case()
