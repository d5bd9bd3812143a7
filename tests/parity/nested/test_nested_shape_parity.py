"""ember.nested against torch.nested for views, reductions, comparisons and indexing:
each case runs on both layouts in both libraries; where torch raises, ember must raise the
same type with the same first sentence, otherwise values (and gradients where torch has a
backward) must match."""
import re
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", message=".*nested tensors is in prototype.*")

LAYOUTS = [("strided", torch.strided, ember.strided), ("jagged", torch.jagged, ember.jagged)]
ARRAYS = [np.random.default_rng(s).standard_normal((n, 6)) for s, n in ((1, 2), (2, 4), (3, 3))]

CASES = {
    "unflatten": lambda n: n.unflatten(-1, (2, 3)),
    "unflatten_flatten": lambda n: n.unflatten(-1, (2, 3)).flatten(-2),
    "flatten_ragged": lambda n: n.flatten(1, 2),
    "view": lambda n: n.view(3, -1, 2, 3),
    "reshape": lambda n: n.reshape(3, -1, 3, 2),
    "reshape_batch": lambda n: n.reshape(-1, 6),
    "view_bad": lambda n: n.view(3, 3, 2, 3),
    "permute": lambda n: n.unflatten(-1, (2, 3)).permute(0, 2, 1, 3),
    "select_last": lambda n: n.select(2, 1),
    "select_batch": lambda n: n.select(0, 1),
    "squeeze": lambda n: n.unsqueeze(2).squeeze(2),
    "squeeze_nodim": lambda n: n.unsqueeze(2).squeeze(),
    "amax": lambda n: n.amax(-1),
    "amax_ragged": lambda n: n.amax(1),
    "max_values": lambda n: n.max(-1).values,
    "max_indices": lambda n: n.max(-1).indices,
    "max_all": lambda n: n.max(),
    "argmax": lambda n: n.argmax(-1),
    "prod": lambda n: n.prod(-1),
    "all": lambda n: (n > 0).all(-1),
    "any": lambda n: (n > 0).any(-1),
    "var": lambda n: n.var(-1),
    "norm": lambda n: n.norm(dim=-1),
    "cumsum": lambda n: n.cumsum(-1),
    "gt_scalar": lambda n: n > 0.1,
    "ge_scalar": lambda n: n >= 0.1,
    "lt_scalar": lambda n: n < 0.1,
    "eq_nested": lambda n: n == n,
    "ge_nested": lambda n: n >= n,
    "maximum": lambda n: torch_or_ember(n).maximum(n, n * 0.5),
    "pow_nested": lambda n: n.abs() ** n,
    "rsub": lambda n: 1 - n,
    "slice": lambda n: n[:, :, 0],
    "index_neg": lambda n: n[-1],
    "sum_ragged_keepdim": lambda n: n.sum(1, keepdim=True),
    "sum_dims": lambda n: n.sum((0, 1)),
    "mean_ragged": lambda n: n.mean(1),
    "softmax_batch": lambda n: n.softmax(0),
    "unbind_1": lambda n: n.unbind(1),
    "where": lambda n: torch_or_ember(n).where(n > 0, n, n * 2),
    "masked_fill": lambda n: n.masked_fill(n > 0, 0.5),
    "zeros_like": lambda n: torch_or_ember(n).zeros_like(n),
    "clone_add_": lambda n: n.clone().add_(n),
    "mul_": lambda n: n.clone().mul_(2.0),
    "cat_last": lambda n: torch_or_ember(n).cat([n, n * 2], -1),
    "stack": lambda n: torch_or_ember(n).stack([n, n]),
    "numel": lambda n: n.numel(),
    "len": lambda n: len(n),
    "size": lambda n: n.size(),
}


def torch_or_ember(n):
    return torch if isinstance(n, torch.Tensor) and not hasattr(n, "_nt_layout") and \
        type(n).__module__.startswith("torch") else ember


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _first_sentence(err):
    text = re.sub(r"j\d+", "jN", str(err).replace("torch.", "ember."))
    return text.split(". ")[0]


def _compare(t_out, e_out):
    if isinstance(t_out, torch.Tensor) and t_out.is_nested:
        assert e_out.is_nested and e_out.layout == str(t_out.layout).split(".")[-1]
        t_parts, e_parts = t_out.unbind(), e_out.unbind()
        assert len(t_parts) == len(e_parts)
        for a, b in zip(t_parts, e_parts):
            np.testing.assert_allclose(_np(b), _np(a), rtol=1e-10, atol=1e-10)
            assert str(b.dtype).split(".")[-1] == str(a.dtype).split(".")[-1]
    elif isinstance(t_out, torch.Tensor):
        np.testing.assert_allclose(_np(e_out), _np(t_out), rtol=1e-10, atol=1e-10)
    elif isinstance(t_out, tuple) and not isinstance(t_out, torch.Size):
        assert len(t_out) == len(e_out)
        for a, b in zip(t_out, e_out):
            _compare(a, b)
    else:
        assert re.sub(r"j\d+", "jN", str(e_out)) == \
            re.sub(r"j\d+", "jN", str(t_out).replace("torch.", "ember."))


@pytest.mark.parametrize("layouts", LAYOUTS, ids=["strided", "jagged"])
@pytest.mark.parametrize("case", list(CASES))
def test_case_matches_torch(case, layouts):
    _, t_layout, e_layout = layouts
    tn = torch.nested.nested_tensor([torch.tensor(a) for a in ARRAYS], layout=t_layout,
                                    requires_grad=True)
    en = ember.nested.nested_tensor([ember.tensor(a) for a in ARRAYS], layout=e_layout,
                                    requires_grad=True)
    try:
        t_out = CASES[case](tn)
    except Exception as t_err:  # noqa: BLE001 (each case's own error type)
        with pytest.raises(type(t_err)) as e_err:
            CASES[case](en)
        assert _first_sentence(e_err.value) == _first_sentence(t_err)
        return
    e_out = CASES[case](en)
    _compare(t_out, e_out)
    if not (isinstance(t_out, torch.Tensor) and t_out.is_nested and t_out.requires_grad):
        return
    try:
        padded = t_out.to_padded_tensor(0.0)
        weights = np.random.default_rng(5).standard_normal(tuple(padded.shape))
        (padded * torch.tensor(weights)).sum().backward()
    except (NotImplementedError, RuntimeError, ValueError):  # torch lacks some backwards
        return
    (e_out.to_padded_tensor(0.0) * ember.tensor(weights)).sum().backward()
    for a, b in zip(tn.grad.unbind(), en.grad.unbind()):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-8, atol=1e-8)


def test_reprs_with_history_match_torch():
    for requires_grad in (False, True):
        tn = torch.nested.nested_tensor([torch.tensor(a) for a in ARRAYS[:2]],
                                        requires_grad=requires_grad)
        en = ember.nested.nested_tensor([ember.tensor(a) for a in ARRAYS[:2]],
                                        requires_grad=requires_grad)
        assert repr(en.relu()) == repr(tn.relu()).replace("torch.", "ember.")
        assert repr(en * 2) == repr(tn * 2).replace("torch.", "ember.")
    tj = torch.nested.nested_tensor([torch.tensor(a) for a in ARRAYS[:2]], layout=torch.jagged,
                                    requires_grad=True)
    ej = ember.nested.nested_tensor([ember.tensor(a) for a in ARRAYS[:2]], layout=ember.jagged,
                                    requires_grad=True)

    def clean(text):
        text = re.sub(r" object at 0x[0-9a-f]+", "", re.sub(r"j\d+", "jN", text))
        return text.replace("torch.", "ember.")

    assert clean(repr(ej)) == clean(repr(tj))
    assert clean(repr(ej * 2)) == clean(repr(tj * 2))
