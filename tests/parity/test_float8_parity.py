"""Parity with torch 2.13: the float8 dtypes (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
float8_e5m2fnuz, float8_e8m0fnu) -- their metadata, bit-exact casts to and from every dtype,
which ops compute and which raise (type and message), the values of those that compute,
printing, save/load and autograd through casts."""
import io
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of, _on_device, DEVICE

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]


def _both(fn):
    """fn(lib) for torch and ember (on the parity device); results or errors must agree."""
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(("ok", _norm(fn(lib) if lib is torch else _on_device(fn, lib), lib)))
            except Exception as e:  # noqa: BLE001 - compared below
                out.append((type(e).__name__, str(e).split("\n")[0]))
    return out


def _norm(v, lib):
    """A result as plain data: float8 tensors as their bits, dtypes and reprs by name."""
    if isinstance(v, (tuple, list)):
        return type(v)(_norm(u, lib) for u in v)
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        if v.dtype.itemsize == 1 and v.dtype.is_floating_point:
            data = v.view(lib.uint8).tolist()
        elif v.dtype in (torch.bfloat16, ember.bfloat16):
            data = v.float().tolist()
        else:
            data = v.tolist()
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), _norm(data, lib))
    if isinstance(v, (torch.dtype, ember.dtype)):
        return ("dtype", str(v).split(".")[-1])
    if isinstance(v, float) and v != v:
        return "nan"  # (nan != nan would fail equal results)
    if isinstance(v, str):
        v = v.replace("ember.", "torch.")
        if DEVICE is not None:  # the device suffix moves line breaks; type() names the device
            v = " ".join(v.replace("torch.cuda.", "torch.").split()).replace(
                ", device='cuda:0'", "")
        return v
    return v


OPS = {
    # creation
    "tensor": lambda L, d: L.tensor([1.0, 2.5, -3.0], dtype=d),
    "tensor_int": lambda L, d: L.tensor([1, 2], dtype=d),
    "tensor_bool": lambda L, d: L.tensor([True, False], dtype=d),
    "zeros": lambda L, d: L.zeros(3, dtype=d),
    "ones": lambda L, d: L.ones(3, dtype=d),
    "empty": lambda L, d: L.empty(3, dtype=d).shape,
    "full": lambda L, d: L.full((2,), 3.0, dtype=d),
    "full_int": lambda L, d: L.full((2,), 3, dtype=d),
    "zeros_like": lambda L, d: L.zeros_like(L.ones(2, dtype=d)),
    "ones_like": lambda L, d: L.ones_like(L.ones(2, dtype=d)),
    "full_like": lambda L, d: L.full_like(L.ones(2, dtype=d), 2.0),
    "empty_like": lambda L, d: L.empty_like(L.ones(2, dtype=d)).dtype,
    "arange": lambda L, d: L.arange(3, dtype=d),
    "arange_f": lambda L, d: L.arange(0, 1, 0.25, dtype=d),
    "linspace": lambda L, d: L.linspace(0, 1, 3, dtype=d),
    "logspace": lambda L, d: L.logspace(0, 1, 3, dtype=d),
    "eye": lambda L, d: L.eye(2, dtype=d),
    "rand": lambda L, d: L.rand(2, dtype=d).shape,
    "randn": lambda L, d: L.randn(2, dtype=d).shape,
    "randint": lambda L, d: L.randint(0, 3, (2,), dtype=d).shape,
    "randperm": lambda L, d: L.randperm(3, dtype=d),
    "normal_": lambda L, d: L.empty(2, dtype=d).normal_().shape,
    "uniform_": lambda L, d: L.empty(2, dtype=d).uniform_().shape,
    "random_": lambda L, d: L.empty(2, dtype=d).random_(0, 3).shape,
    "bernoulli_": lambda L, d: L.empty(2, dtype=d).bernoulli_(0.5).shape,
    "fill_": lambda L, d: L.zeros(2, dtype=d).fill_(1.5),
    "zero_": lambda L, d: L.ones(2, dtype=d).zero_(),
    "new_zeros": lambda L, d: L.ones(2, dtype=d).new_zeros(3),
    "new_ones": lambda L, d: L.ones(2, dtype=d).new_ones(3),
    "new_full": lambda L, d: L.ones(2, dtype=d).new_full((2,), 2.0),
    "new_tensor": lambda L, d: L.ones(2, dtype=d).new_tensor([1.0, 2.0]),
    "tril_indices": lambda L, d: L.tril_indices(2, 2, dtype=d),
    # casts
    "to_f32": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.float32),
    "to_f16": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.float16),
    "to_bf16": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.bfloat16),
    "to_f64": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.float64),
    "to_i64": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.int64),
    "to_i8": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.int8),
    "to_u8": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.uint8),
    "to_bool": lambda L, d: L.tensor([0.0, 2.5], dtype=d).to(L.bool),
    "to_c64": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.complex64),
    "to_other_f8": lambda L, d: L.tensor([1.0, 2.5], dtype=d).to(L.float8_e5m2).to(L.float32),
    "from_i64": lambda L, d: L.tensor([1, 3, 300], dtype=L.int64).to(d),
    "from_bool": lambda L, d: L.tensor([True, False]).to(d),
    "from_c64": lambda L, d: L.tensor([1+1j]).to(d),
    "float()": lambda L, d: L.tensor([1.0], dtype=d).float(),
    "half()": lambda L, d: L.tensor([1.0], dtype=d).half(),
    "item": lambda L, d: L.tensor([1.5], dtype=d).item(),
    "tolist": lambda L, d: L.tensor([1.5, 2.0], dtype=d).tolist(),
    "float(t)": lambda L, d: float(L.tensor(1.5, dtype=d)),
    "int(t)": lambda L, d: int(L.tensor(1.5, dtype=d)),
    "bool(t)": lambda L, d: bool(L.tensor(1.5, dtype=d)),
    "view_u8": lambda L, d: L.tensor([1.0, 2.0], dtype=d).view(L.uint8),
    "view_i8": lambda L, d: L.tensor([1.0, 2.0], dtype=d).view(L.int8),
    "u8_view": lambda L, d: L.tensor([56, 64], dtype=L.uint8).view(d).float(),
    "view_f16": lambda L, d: L.tensor([1.0, 2.0], dtype=d).view(L.float16),
    "view_bool": lambda L, d: L.tensor([1.0, 2.0], dtype=d).view(L.bool),
    "type()": lambda L, d: L.tensor([1.0], dtype=d).type(),
    "is_fp": lambda L, d: L.tensor([1.0], dtype=d).is_floating_point(),
    "element_size": lambda L, d: L.tensor([1.0], dtype=d).element_size(),
    "numpy": lambda L, d: L.tensor([1.0], dtype=d).numpy(),
    "str": lambda L, d: str(L.tensor([1.0, 2.5, -3.0], dtype=d)),
    "repr0d": lambda L, d: repr(L.tensor(1.5, dtype=d)),
    "repr_empty": lambda L, d: repr(L.zeros(0, dtype=d)),
    "repr_big": lambda L, d: repr(L.tensor([1e-3, 100.0, 0.5], dtype=L.float32).to(d)),
    # shape / copy
    "clone": lambda L, d: L.ones(2, dtype=d).clone(),
    "contiguous": lambda L, d: L.ones(2, 2, dtype=d).t().contiguous(),
    "copy_": lambda L, d: L.zeros(2, dtype=d).copy_(L.tensor([1.5, 2.0])),
    "copy_f8f8": lambda L, d: L.zeros(2, dtype=d).copy_(L.ones(2, dtype=d)),
    "copy_into_f32": lambda L, d: L.zeros(2).copy_(L.ones(2, dtype=d)),
    "cat": lambda L, d: L.cat([L.ones(2, dtype=d), L.zeros(1, dtype=d)]),
    "cat_mixed": lambda L, d: L.cat([L.ones(2, dtype=d), L.zeros(1)]),
    "stack": lambda L, d: L.stack([L.ones(2, dtype=d), L.zeros(2, dtype=d)]),
    "reshape": lambda L, d: L.ones(4, dtype=d).reshape(2, 2),
    "view": lambda L, d: L.ones(4, dtype=d).view(2, 2),
    "transpose": lambda L, d: L.ones(2, 3, dtype=d).t(),
    "permute": lambda L, d: L.ones(2, 3, 1, dtype=d).permute(2, 0, 1).shape,
    "expand": lambda L, d: L.ones(1, dtype=d).expand(3),
    "squeeze": lambda L, d: L.ones(1, 2, dtype=d).squeeze(0),
    "unsqueeze": lambda L, d: L.ones(2, dtype=d).unsqueeze(0),
    "flatten": lambda L, d: L.ones(2, 2, dtype=d).flatten(),
    "narrow": lambda L, d: L.ones(4, dtype=d).narrow(0, 1, 2),
    "split": lambda L, d: L.ones(4, dtype=d).split(2),
    "chunk": lambda L, d: L.ones(4, dtype=d).chunk(2),
    "unbind": lambda L, d: L.ones(2, 2, dtype=d).unbind(),
    "flip": lambda L, d: L.tensor([1., 2.], dtype=d).flip(0),
    "roll": lambda L, d: L.tensor([1., 2.], dtype=d).roll(1),
    "repeat": lambda L, d: L.ones(2, dtype=d).repeat(2),
    "tile": lambda L, d: L.ones(2, dtype=d).tile(2),
    "repeat_interleave": lambda L, d: L.ones(2, dtype=d).repeat_interleave(2),
    "movedim": lambda L, d: L.ones(2, 3, dtype=d).movedim(0, 1).shape,
    "diagonal": lambda L, d: L.ones(2, 2, dtype=d).diagonal(),
    "diag": lambda L, d: L.ones(2, dtype=d).diag(),
    "diag_embed": lambda L, d: L.ones(2, dtype=d).diag_embed(),
    "tril": lambda L, d: L.ones(2, 2, dtype=d).tril(),
    "triu": lambda L, d: L.ones(2, 2, dtype=d).triu(),
    "unfold": lambda L, d: L.ones(4, dtype=d).unfold(0, 2, 1),
    "as_strided": lambda L, d: L.ones(4, dtype=d).as_strided((2,), (2,)),
    "rot90": lambda L, d: L.ones(2, 2, dtype=d).rot90(),
    "pad_const": lambda L, d: L.nn.functional.pad(L.ones(2, dtype=d), (1, 1)),
    "pad_reflect": lambda L, d: L.nn.functional.pad(L.ones(1, 3, dtype=d), (1, 1), mode="reflect"),
    # indexing
    "getitem_int": lambda L, d: L.tensor([1., 2.], dtype=d)[1],
    "getitem_slice": lambda L, d: L.tensor([1., 2., 3.], dtype=d)[::2],
    "getitem_list": lambda L, d: L.tensor([1., 2., 3.], dtype=d)[[0, 2]],
    "getitem_tensor": lambda L, d: L.tensor([1., 2., 3.], dtype=d)[L.tensor([0, 2])],
    "getitem_mask": lambda L, d: L.tensor([1., 2., 3.], dtype=d)[L.tensor([True, False, True])],
    "setitem_scalar": lambda L, d: _set(L.zeros(3, dtype=d), 1, 2.0),
    "setitem_slice_tensor": lambda L, d: _set(L.zeros(3, dtype=d), slice(0, 2), L.ones(2, dtype=d)),
    "setitem_slice_f32": lambda L, d: _set(L.zeros(3, dtype=d), slice(0, 2), L.ones(2)),
    "setitem_list": lambda L, d: _set(L.zeros(3, dtype=d), [0, 2], 1.0),
    "setitem_mask": lambda L, d: _set(L.zeros(3, dtype=d), L.tensor([True, False, True]), 1.0),
    "setitem_list_tensor": lambda L, d: _set(L.zeros(3, dtype=d), [0, 2], L.ones(2, dtype=d)),
    "index_select": lambda L, d: L.ones(3, dtype=d).index_select(0, L.tensor([0, 2])),
    "gather": lambda L, d: L.ones(3, dtype=d).gather(0, L.tensor([0, 2])),
    "scatter": lambda L, d: L.zeros(3, dtype=d).scatter(0, L.tensor([0]), L.ones(1, dtype=d)),
    "scatter_add": lambda L, d: L.zeros(3, dtype=d).scatter_add(0, L.tensor([0]),
                                                                L.ones(1, dtype=d)),
    "index_add": lambda L, d: L.zeros(3, dtype=d).index_add(0, L.tensor([0]), L.ones(1, dtype=d)),
    "index_copy": lambda L, d: L.zeros(3, dtype=d).index_copy(0, L.tensor([0]), L.ones(1, dtype=d)),
    "index_fill": lambda L, d: L.zeros(3, dtype=d).index_fill(0, L.tensor([0]), 1.0),
    "index_put": lambda L, d: L.zeros(3, dtype=d).index_put((L.tensor([0]),), L.ones(1, dtype=d)),
    "masked_fill": lambda L, d: L.zeros(3, dtype=d).masked_fill(L.tensor([True, False, True]), 1.0),
    "masked_select": lambda L, d: L.ones(3, dtype=d).masked_select(L.tensor([True, False, True])),
    "masked_scatter": lambda L, d: L.zeros(3, dtype=d).masked_scatter(
        L.tensor([True, False, True]), L.ones(3, dtype=d)),
    "take": lambda L, d: L.ones(3, dtype=d).take(L.tensor([0, 2])),
    "put": lambda L, d: L.zeros(3, dtype=d).put(L.tensor([0]), L.ones(1, dtype=d)),
    "where": lambda L, d: L.where(L.tensor([True, False]), L.ones(2, dtype=d), L.zeros(2, dtype=d)),
    "where_scalar": lambda L, d: L.where(L.tensor([True, False]), L.ones(2, dtype=d), 0.0),
    "nonzero": lambda L, d: L.tensor([0., 1.], dtype=d).nonzero(),
    "count_nonzero": lambda L, d: L.tensor([0., 1.], dtype=d).count_nonzero(),
    "select_scatter": lambda L, d: L.select_scatter(L.zeros(2, 2, dtype=d), L.ones(2, dtype=d),
                                                    0, 0),
    "slice_scatter": lambda L, d: L.slice_scatter(L.zeros(2, 2, dtype=d),
                                                  L.ones(1, 2, dtype=d), 0, 0, 1),
    # comparisons
    "eq": lambda L, d: L.tensor([1., 2.], dtype=d) == L.tensor([1., 3.], dtype=d),
    "eq_scalar": lambda L, d: L.tensor([1., 2.], dtype=d) == 1.0,
    "eq_f32": lambda L, d: L.tensor([1., 2.], dtype=d) == L.tensor([1., 3.]),
    "ne": lambda L, d: L.tensor([1., 2.], dtype=d) != L.tensor([1., 3.], dtype=d),
    "ne_scalar": lambda L, d: L.tensor([1., 2.], dtype=d) != 1.0,
    "lt": lambda L, d: L.tensor([1., 2.], dtype=d) < L.tensor([1., 3.], dtype=d),
    "lt_scalar": lambda L, d: L.tensor([1., 2.], dtype=d) < 1.5,
    "le": lambda L, d: L.tensor([1., 2.], dtype=d) <= L.tensor([1., 3.], dtype=d),
    "gt": lambda L, d: L.tensor([1., 2.], dtype=d) > L.tensor([1., 3.], dtype=d),
    "ge": lambda L, d: L.tensor([1., 2.], dtype=d) >= L.tensor([1., 3.], dtype=d),
    "equal": lambda L, d: L.equal(L.tensor([1., 2.], dtype=d), L.tensor([1., 2.], dtype=d)),
    "allclose": lambda L, d: L.allclose(L.tensor([1., 2.], dtype=d), L.tensor([1., 2.], dtype=d)),
    "isclose": lambda L, d: L.isclose(L.tensor([1., 2.], dtype=d), L.tensor([1., 2.], dtype=d)),
    "isnan": lambda L, d: L.tensor([1., 2.], dtype=d).isnan(),
    "isinf": lambda L, d: L.tensor([1., 2.], dtype=d).isinf(),
    "isfinite": lambda L, d: L.tensor([1., 2.], dtype=d).isfinite(),
    "isposinf": lambda L, d: L.tensor([1., 2.], dtype=d).isposinf(),
    "signbit": lambda L, d: L.tensor([1., 2.], dtype=d).signbit(),
    "maximum": lambda L, d: L.maximum(L.ones(2, dtype=d), L.zeros(2, dtype=d)),
    "minimum": lambda L, d: L.minimum(L.ones(2, dtype=d), L.zeros(2, dtype=d)),
    # arithmetic
    "add": lambda L, d: L.ones(2, dtype=d) + L.ones(2, dtype=d),
    "add_scalar": lambda L, d: L.ones(2, dtype=d) + 1.0,
    "add_f32": lambda L, d: L.ones(2, dtype=d) + L.ones(2),
    "add_0d_f32": lambda L, d: L.ones(2, dtype=d) + L.tensor(1.0),
    "radd": lambda L, d: 1.0 + L.ones(2, dtype=d),
    "iadd": lambda L, d: _iadd(L.ones(2, dtype=d)),
    "sub": lambda L, d: L.ones(2, dtype=d) - L.ones(2, dtype=d),
    "mul": lambda L, d: L.ones(2, dtype=d) * L.ones(2, dtype=d),
    "mul_scalar": lambda L, d: L.ones(2, dtype=d) * 2.0,
    "div": lambda L, d: L.ones(2, dtype=d) / L.ones(2, dtype=d),
    "div_scalar": lambda L, d: L.ones(2, dtype=d) / 2.0,
    "floordiv": lambda L, d: L.ones(2, dtype=d) // L.ones(2, dtype=d),
    "remainder": lambda L, d: L.ones(2, dtype=d) % L.ones(2, dtype=d),
    "fmod": lambda L, d: L.fmod(L.ones(2, dtype=d), 1.0),
    "pow": lambda L, d: L.ones(2, dtype=d) ** 2,
    "pow_t": lambda L, d: L.ones(2, dtype=d) ** L.ones(2, dtype=d),
    "neg": lambda L, d: -L.ones(2, dtype=d),
    "abs": lambda L, d: L.ones(2, dtype=d).abs(),
    "sign": lambda L, d: L.ones(2, dtype=d).sign(),
    "sgn": lambda L, d: L.ones(2, dtype=d).sgn(),
    "exp": lambda L, d: L.ones(2, dtype=d).exp(),
    "log": lambda L, d: L.ones(2, dtype=d).log(),
    "sqrt": lambda L, d: L.ones(2, dtype=d).sqrt(),
    "rsqrt": lambda L, d: L.ones(2, dtype=d).rsqrt(),
    "sin": lambda L, d: L.ones(2, dtype=d).sin(),
    "tanh": lambda L, d: L.ones(2, dtype=d).tanh(),
    "sigmoid": lambda L, d: L.ones(2, dtype=d).sigmoid(),
    "relu": lambda L, d: L.ones(2, dtype=d).relu(),
    "floor": lambda L, d: L.ones(2, dtype=d).floor(),
    "ceil": lambda L, d: L.ones(2, dtype=d).ceil(),
    "round": lambda L, d: L.ones(2, dtype=d).round(),
    "trunc": lambda L, d: L.ones(2, dtype=d).trunc(),
    "frac": lambda L, d: L.ones(2, dtype=d).frac(),
    "reciprocal": lambda L, d: L.ones(2, dtype=d).reciprocal(),
    "square": lambda L, d: L.ones(2, dtype=d).square(),
    "clamp": lambda L, d: L.ones(2, dtype=d).clamp(0, 1),
    "clamp_min": lambda L, d: L.ones(2, dtype=d).clamp(min=0),
    "nan_to_num": lambda L, d: L.ones(2, dtype=d).nan_to_num(),
    "lerp": lambda L, d: L.lerp(L.ones(2, dtype=d), L.zeros(2, dtype=d), 0.5),
    "addcmul": lambda L, d: L.addcmul(L.ones(2, dtype=d), L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "bitwise_and": lambda L, d: L.ones(2, dtype=d) & L.ones(2, dtype=d),
    "logical_not": lambda L, d: L.ones(2, dtype=d).logical_not(),
    "logical_and": lambda L, d: L.ones(2, dtype=d).logical_and(L.ones(2, dtype=d)),
    "softmax": lambda L, d: L.ones(2, dtype=d).softmax(0),
    "gelu": lambda L, d: L.nn.functional.gelu(L.ones(2, dtype=d)),
    "silu": lambda L, d: L.nn.functional.silu(L.ones(2, dtype=d)),
    "dropout": lambda L, d: L.nn.functional.dropout(L.ones(2, dtype=d), 0.0),
    "dropout_train": lambda L, d: L.nn.functional.dropout(L.ones(2, dtype=d), 0.5).shape,
    # reductions
    "sum": lambda L, d: L.ones(2, dtype=d).sum(),
    "sum_dim": lambda L, d: L.ones(2, 2, dtype=d).sum(0),
    "sum_dtype": lambda L, d: L.ones(2, dtype=d).sum(dtype=L.float32),
    "mean": lambda L, d: L.ones(2, dtype=d).mean(),
    "prod": lambda L, d: L.ones(2, dtype=d).prod(),
    "max": lambda L, d: L.ones(2, dtype=d).max(),
    "max_dim": lambda L, d: L.ones(2, dtype=d).max(0),
    "min": lambda L, d: L.ones(2, dtype=d).min(),
    "amax": lambda L, d: L.ones(2, dtype=d).amax(),
    "aminmax": lambda L, d: L.aminmax(L.ones(2, dtype=d)),
    "argmax": lambda L, d: L.ones(2, dtype=d).argmax(),
    "argmin": lambda L, d: L.ones(2, dtype=d).argmin(),
    "any": lambda L, d: L.ones(2, dtype=d).any(),
    "all": lambda L, d: L.ones(2, dtype=d).all(),
    "norm": lambda L, d: L.ones(2, dtype=d).norm(),
    "var": lambda L, d: L.ones(2, dtype=d).var(),
    "std": lambda L, d: L.ones(2, dtype=d).std(),
    "cumsum": lambda L, d: L.ones(2, dtype=d).cumsum(0),
    "cumprod": lambda L, d: L.ones(2, dtype=d).cumprod(0),
    "cummax": lambda L, d: L.ones(2, dtype=d).cummax(0),
    "logsumexp": lambda L, d: L.ones(2, dtype=d).logsumexp(0),
    "sort": lambda L, d: L.tensor([2., 1.], dtype=d).sort(),
    "argsort": lambda L, d: L.tensor([2., 1.], dtype=d).argsort(),
    "topk": lambda L, d: L.tensor([2., 1.], dtype=d).topk(1),
    "kthvalue": lambda L, d: L.tensor([2., 1.], dtype=d).kthvalue(1),
    "median": lambda L, d: L.tensor([2., 1.], dtype=d).median(),
    "mode": lambda L, d: L.tensor([2., 1.], dtype=d).mode(),
    "unique": lambda L, d: L.tensor([2., 1.], dtype=d).unique(),
    "unique_consecutive": lambda L, d: L.tensor([2., 1.], dtype=d).unique_consecutive(),
    "searchsorted": lambda L, d: L.searchsorted(L.tensor([1., 2.], dtype=d),
                                                L.tensor([1.5], dtype=d)),
    "bincount": lambda L, d: L.bincount(L.tensor([0, 1]), L.ones(2, dtype=d)),
    "histc": lambda L, d: L.histc(L.ones(2, dtype=d)),
    "isin": lambda L, d: L.isin(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    # products
    "matmul": lambda L, d: L.ones(2, 2, dtype=d) @ L.ones(2, 2, dtype=d),
    "mm": lambda L, d: L.ones(2, 2, dtype=d).mm(L.ones(2, 2, dtype=d)),
    "dot": lambda L, d: L.ones(2, dtype=d).dot(L.ones(2, dtype=d)),
    "bmm": lambda L, d: L.ones(1, 2, 2, dtype=d).bmm(L.ones(1, 2, 2, dtype=d)),
    "linear": lambda L, d: L.nn.functional.linear(L.ones(2, 2, dtype=d), L.ones(2, 2, dtype=d)),
    "einsum": lambda L, d: L.einsum("ij,jk->ik", L.ones(2, 2, dtype=d), L.ones(2, 2, dtype=d)),
    "outer": lambda L, d: L.outer(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "trace": lambda L, d: L.ones(2, 2, dtype=d).trace(),
    "conv1d": lambda L, d: L.nn.functional.conv1d(L.ones(1, 1, 3, dtype=d),
                                                  L.ones(1, 1, 2, dtype=d)),
    "embedding": lambda L, d: L.nn.functional.embedding(L.tensor([0]), L.ones(2, 2, dtype=d)),
    "max_pool1d": lambda L, d: L.nn.functional.max_pool1d(L.ones(1, 1, 4, dtype=d), 2),
    "layer_norm": lambda L, d: L.nn.functional.layer_norm(L.ones(2, 2, dtype=d), (2,)),
    # promotion
    "promote_f32": lambda L, d: L.promote_types(d, L.float32),
    "promote_same": lambda L, d: L.promote_types(d, d),
    "promote_i64": lambda L, d: L.promote_types(d, L.int64),
    "promote_bool": lambda L, d: L.promote_types(d, L.bool),
    "promote_u16": lambda L, d: L.promote_types(d, L.uint16),
    "promote_other_f8": lambda L, d: L.promote_types(d, L.float8_e5m2),
    "promote_rev": lambda L, d: L.promote_types(L.float64, d),
    "result_type_scalar": lambda L, d: L.result_type(L.ones(2, dtype=d), 1.0),
    "result_type_int": lambda L, d: L.result_type(L.ones(2, dtype=d), 1),
    "result_type_t": lambda L, d: L.result_type(L.ones(2, dtype=d), L.ones(2)),
    "can_cast": lambda L, d: (L.can_cast(d, L.float32), L.can_cast(L.float32, d),
                              L.can_cast(d, L.int64)),
    # autograd
    "requires_grad": lambda L, d: L.ones(2, dtype=d, requires_grad=True).requires_grad,
    "requires_grad_": lambda L, d: L.ones(2, dtype=d).requires_grad_().requires_grad,
    "to_with_grad": lambda L, d: _to_grad(L, d),
    "detach": lambda L, d: L.ones(2, dtype=d).detach(),
    # misc
    "is_nonzero": lambda L, d: L.tensor([1.], dtype=d).is_nonzero(),
    "abs_": lambda L, d: L.ones(2, dtype=d).abs_(),
    "mul_": lambda L, d: L.ones(2, dtype=d).mul_(2),
    "set_default": lambda L, d: L.set_default_dtype(d),
    "tensor_from_f8_tensor": lambda L, d: L.tensor(L.ones(2, dtype=d)),
    "as_tensor": lambda L, d: L.as_tensor([1.0, 2.0], dtype=d),
    "sum_to_size": lambda L, d: L.ones(2, 2, dtype=d).sum_to_size(2),
}

#: more calls: element-wise math, losses, norms, products, draws, factories
OPS_MORE = {
    "max_other": lambda L, d: L.max(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "clamp_t": lambda L, d: L.ones(2, dtype=d).clamp(L.zeros(2, dtype=d), L.ones(2, dtype=d)),
    "clamp_max": lambda L, d: L.ones(2, dtype=d).clamp(max=1),
    "cumsum_dtype": lambda L, d: L.ones(2, dtype=d).cumsum(0, dtype=L.float32),
    "mean_dtype": lambda L, d: L.ones(2, dtype=d).mean(dtype=L.float32),
    "prod_dtype": lambda L, d: L.ones(2, dtype=d).prod(dtype=L.float32),
    "softmax_dtype": lambda L, d: L.ones(2, dtype=d).softmax(0, dtype=L.float32),
    "log_softmax": lambda L, d: L.ones(2, dtype=d).log_softmax(0),
    "vector_norm": lambda L, d: L.linalg.vector_norm(L.ones(2, dtype=d)),
    "normalize": lambda L, d: L.nn.functional.normalize(L.ones(2, 2, dtype=d)),
    "hardtanh": lambda L, d: L.nn.functional.hardtanh(L.ones(2, dtype=d)),
    "leaky_relu": lambda L, d: L.nn.functional.leaky_relu(L.ones(2, dtype=d)),
    "elu": lambda L, d: L.nn.functional.elu(L.ones(2, dtype=d)),
    "mse": lambda L, d: L.nn.functional.mse_loss(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "cross_entropy": lambda L, d: L.nn.functional.cross_entropy(L.ones(2, 3, dtype=d),
                                                                L.tensor([0, 1])),
    "logical_or": lambda L, d: L.ones(2, dtype=d).logical_or(L.ones(2, dtype=d)),
    "bitwise_not": lambda L, d: L.ones(2, dtype=d).bitwise_not(),
    "diff": lambda L, d: L.ones(3, dtype=d).diff(),
    "addcdiv": lambda L, d: L.addcdiv(L.ones(2, dtype=d), L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "heaviside": lambda L, d: L.heaviside(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "hypot": lambda L, d: L.hypot(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "atan2": lambda L, d: L.atan2(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "copysign": lambda L, d: L.copysign(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "xlogy": lambda L, d: L.xlogy(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "logaddexp": lambda L, d: L.logaddexp(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "sinh": lambda L, d: L.ones(2, dtype=d).sinh(),
    "erfinv": lambda L, d: L.ones(2, dtype=d).erfinv(),
    "lgamma": lambda L, d: L.ones(2, dtype=d).lgamma(),
    "sgn": lambda L, d: L.ones(2, dtype=d).sgn(),
    "rsub": lambda L, d: 1 - L.ones(2, dtype=d),
    "rdiv": lambda L, d: 1 / L.ones(2, dtype=d),
    "rmul": lambda L, d: 2 * L.ones(2, dtype=d),
    "rpow": lambda L, d: 2 ** L.ones(2, dtype=d),
    "interp": lambda L, d: L.nn.functional.interpolate(L.ones(1, 1, 2, dtype=d), scale_factor=2),
    "avg_pool1d": lambda L, d: L.nn.functional.avg_pool1d(L.ones(1, 1, 4, dtype=d), 2),
    "adaptive_avg": lambda L, d: L.nn.functional.adaptive_avg_pool1d(L.ones(1, 1, 4, dtype=d), 2),
    "topk": lambda L, d: L.ones(3, dtype=d).topk(2),
    "mul_0d": lambda L, d: L.ones(2, dtype=d) * L.tensor(2.0),
    "mul_0d_f8": lambda L, d: L.ones(2, dtype=d) * L.tensor(2.0).to(d),
    "eq_0d": lambda L, d: L.ones(2, dtype=d) == L.tensor(1.0),
    "tril_": lambda L, d: L.ones(2, 2, dtype=d).tril_(),
    "trunc_div": lambda L, d: L.div(L.ones(2, dtype=d), L.ones(2, dtype=d), rounding_mode="trunc"),
    "floor_div_s": lambda L, d: L.ones(2, dtype=d) // 2,
    "mod_s": lambda L, d: L.ones(2, dtype=d) % 2,
    "pow_s": lambda L, d: L.ones(2, dtype=d) ** 2.0,
    "sqrt_": lambda L, d: L.ones(2, dtype=d).sqrt_(),
    "clamp_": lambda L, d: L.ones(2, dtype=d).clamp_(0, 1),
    "add_": lambda L, d: L.ones(2, dtype=d).add_(L.ones(2, dtype=d)),
    "lerp_t": lambda L, d: L.lerp(L.ones(2, dtype=d), L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "kron": lambda L, d: L.kron(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "tensordot": lambda L, d: L.tensordot(L.ones(2, 2, dtype=d), L.ones(2, 2, dtype=d)),
    "mv": lambda L, d: L.mv(L.ones(2, 2, dtype=d), L.ones(2, dtype=d)),
    "inner": lambda L, d: L.inner(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "vdot": lambda L, d: L.vdot(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "matmul_3d": lambda L, d: L.ones(2, 2, 2, dtype=d) @ L.ones(2, 2, 2, dtype=d),
    "matmul_3d2d": lambda L, d: L.ones(2, 2, 2, dtype=d) @ L.ones(2, 2, dtype=d),
    "mm_big": lambda L, d: L.ones(30, 30, dtype=d) @ L.ones(30, 30, dtype=d),
    "chunk_cat": lambda L, d: L.cat(L.ones(4, dtype=d).chunk(2)),
    "hstack": lambda L, d: L.hstack([L.ones(2, dtype=d), L.ones(2, dtype=d)]),
    "meshgrid": lambda L, d: L.meshgrid(L.ones(2, dtype=d), L.ones(2, dtype=d), indexing="ij"),
    "broadcast_to": lambda L, d: L.broadcast_to(L.ones(2, dtype=d), (2, 2)),
    "block_diag": lambda L, d: L.block_diag(L.ones(1, 1, dtype=d), L.ones(1, 1, dtype=d)),
    "cartesian": lambda L, d: L.cartesian_prod(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "nan_to_num_": lambda L, d: L.ones(2, dtype=d).nan_to_num_(),
    "sign_": lambda L, d: L.ones(2, dtype=d).sign_(),
    "index_put_acc": lambda L, d: L.zeros(3, dtype=d).index_put_(
        (L.tensor([0, 0]),), L.ones(2, dtype=d), accumulate=True),
    "scatter_reduce": lambda L, d: L.zeros(3, dtype=d).scatter_reduce(
        0, L.tensor([0]), L.ones(1, dtype=d), "sum"),
    "masked_fill_t": lambda L, d: L.zeros(3, dtype=d).masked_fill(
        L.tensor([True, False, True]), L.tensor(1.0)),
    "where_0d": lambda L, d: L.where(L.tensor([True, False]), L.ones(2, dtype=d), L.tensor(0.0)),
    "float_power": lambda L, d: L.float_power(L.ones(2, dtype=d), 2),
    "true_div_": lambda L, d: L.ones(2, dtype=d).div_(L.ones(2, dtype=d)),
    "histogram": lambda L, d: L.histogram(L.ones(2, dtype=d), 2),
    "quantile": lambda L, d: L.quantile(L.ones(2, dtype=d), 0.5),
    "count_nz_dim": lambda L, d: L.ones(2, 2, dtype=d).count_nonzero(0),
    "argwhere": lambda L, d: L.argwhere(L.ones(2, dtype=d)),
    "isreal": lambda L, d: L.isreal(L.ones(2, dtype=d)),
    "isneginf": lambda L, d: L.isneginf(L.ones(2, dtype=d)),
    "allclose_same": lambda L, d: L.allclose(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "dist": lambda L, d: L.dist(L.ones(2, dtype=d), L.ones(2, dtype=d)),
    "cummin": lambda L, d: L.ones(2, dtype=d).cummin(0),
    "logcumsumexp": lambda L, d: L.ones(2, dtype=d).logcumsumexp(0),
    "msort": lambda L, d: L.msort(L.ones(2, dtype=d)),
    "flatten_": lambda L, d: L.ones(2, 2, dtype=d).ravel(),
    "new_empty_strided": lambda L, d: L.ones(2, dtype=d).new_empty_strided((2,), (1,)).shape,
    "empty_like_f": lambda L, d: L.empty_like(L.ones(2), dtype=d).dtype,
    "zeros_like_f": lambda L, d: L.zeros_like(L.ones(2), dtype=d),
    "full_like_f": lambda L, d: L.full_like(L.ones(2), 2.0, dtype=d),
    "ones_like_e": lambda L, d: L.ones_like(L.ones(2, dtype=d), dtype=L.float32),
    "rand_like": lambda L, d: L.rand_like(L.ones(2, dtype=d)).shape,
    "randn_like": lambda L, d: L.randn_like(L.ones(2, dtype=d)).shape,
    "randint_like": lambda L, d: L.randint_like(L.ones(2, dtype=d), 3).shape,
    "exponential_": lambda L, d: L.ones(2, dtype=d).exponential_().shape,
    "multinomial": lambda L, d: L.multinomial(L.ones(2, dtype=d), 1).shape,
    "to_bool_cmp": lambda L, d: L.ones(2, dtype=d).bool(),
    "sum_bool": lambda L, d: (L.ones(2, dtype=d) == 1).sum(),
    "tolist2d": lambda L, d: L.ones(2, 2, dtype=d).tolist(),
    "item0d": lambda L, d: L.tensor(3.0, dtype=d).item(),
    "format": lambda L, d: f"{L.tensor(3.0, dtype=d):.2f}",
    "index_int_tensor": lambda L, d: L.ones(3, dtype=d)[L.tensor(1)],
    "requires_grad_cast_back": lambda L, d: L.ones(2, requires_grad=True).to(d).grad_fn.name(),
}


def _set(t, i, v):
    t[i] = v
    return t


def _iadd(t):
    t += 1
    return t


def _to_grad(L, d):
    x = L.tensor([1.0, 2.5], requires_grad=True)
    y = x.to(d)
    y.to(L.float32).sum().backward()
    return y.requires_grad, x.grad


# ---- which ops compute, which raise ----------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_op_support_matrix(name):
    """~250 calls: creation, casts, views, indexing, comparisons, arithmetic, reductions,
    products, nn functions, promotion; each must give torch's result (bits) or its error."""
    bad = []
    try:
        for key, op in {**OPS, **OPS_MORE}.items():
            if DEVICE is not None and key == "numpy":
                continue  # (a device tensor has no NumPy array either way)
            t, e = _both(lambda lib: op(lib, getattr(lib, name)))
            if t != e:
                bad.append((key, t, e))
    finally:
        ember.set_default_dtype(ember.float32)
    assert not bad, "\n".join(f"{k}: torch {t} / ember {e}" for k, t, e in bad[:10])


# ---- metadata -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_dtype_metadata_and_finfo(name):
    def run(lib):
        d = getattr(lib, name)
        info = lib.finfo(d)
        return (repr(d), d.is_floating_point, d.is_signed, d.is_complex, d.itemsize,
                repr(d.to_real()), info.bits, info.max, info.min, info.eps, info.tiny,
                info.smallest_normal, info.resolution, info.dtype, repr(info),
                error_of(lambda: d.to_complex()), error_of(lambda: lib.iinfo(d)),
                lib.ones(2, dtype=d).type(), lib.ones(2, dtype=d).is_floating_point(),
                lib.ones(2, dtype=d).element_size(), lib.ones(2, dtype=d).is_signed())
    t, e = _both(run)
    assert t == e


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("other", ["float32", "float64", "bfloat16", "int64", "bool", "uint16",
                                   "complex64"] + NAMES)
def test_promotion(name, other):
    def run(lib):
        d, o = getattr(lib, name), getattr(lib, other)
        x = lib.ones(2, dtype=d)
        return (error_of(lambda: lib.promote_types(d, o)),
                error_of(lambda: lib.promote_types(o, d)),
                error_of(lambda: lib.result_type(x, lib.ones(2, dtype=o))),
                str(lib.result_type(x, lib.ones((), dtype=o))).split(".")[-1]
                if other not in ("complex64",) else None,
                str(lib.result_type(x, 2.5)).split(".")[-1], lib.can_cast(d, o),
                lib.can_cast(o, d))
    t, e = _both(run)
    assert t == e


# ---- casts, bit for bit ---------------------------------------------------------------------
def _float32_sweep():
    """Every 4099th float32 bit pattern (subnormals, normals, inf, NaN of either sign) and the
    values where rounding decides: ties, each type's largest values and overflow."""
    pats = np.arange(0, 2 ** 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = [0.0, 1.0625, 1.1875, 1.125 + 2 ** -4, 3.0, 1.5, 2.5, 2 ** -9, 2 ** -10,
               3 * 2 ** -11, 2 ** -6, 2 ** -7, 2 ** -16, 2 ** -17, 448, 449, 464, 465, 480,
               240, 247, 248, 256, 57344, 61439, 61440, 65536, 2.0 ** -127, 2.0 ** -128,
               2.0 ** 127, 1.5 * 2 ** 127, 3e38, np.inf, np.nan]
    special = np.array(special, np.float32)
    return np.concatenate([pats, special, -special])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("source", ["float32", "float64", "float16", "bfloat16", "int64",
                                    "int8", "bool", "complex64"])
def test_cast_bits_into_float8(name, source):
    values = _float32_sweep()
    if source == "float64":  # values float32 cannot hold: torch rounds them twice
        rng = np.random.default_rng(0)
        values = np.concatenate([values.astype(np.float64),
                                 rng.standard_normal(4000) * np.exp(rng.uniform(-25, 25, 4000)),
                                 1.0625 + np.array([2.0 ** -40, -2.0 ** -40, 2.0 ** -20])])
    with np.errstate(all="ignore"):
        if source in ("int64", "int8"):
            values = np.nan_to_num(values[np.isfinite(values)]).clip(-2 ** 62, 2 ** 62)
        if source == "complex64":
            values = values + 1j
        t_src = torch.from_numpy(np.array(values))
        if source != "bfloat16":
            t_src = t_src.to(getattr(torch, source))
        else:
            t_src = t_src.to(torch.float32).to(torch.bfloat16)
        t = t_src.to(getattr(torch, name)).view(torch.uint8).numpy()
        src = t_src.float() if source == "bfloat16" else t_src
        e_src = ember.tensor(src.numpy(), device=DEVICE)
        if source == "bfloat16":
            e_src = e_src.to(ember.bfloat16)
        e = e_src.to(getattr(ember, name)).view(ember.uint8).cpu().numpy()
    bad = np.nonzero(t != e)[0]
    assert not bad.size, [(values[i], t[i], e[i]) for i in bad[:5]]


@pytest.mark.parametrize("name", NAMES)
def test_cast_bits_out_of_float8(name):
    """All 256 patterns to every dtype (NaN payloads and float8 -> float8 included)."""
    pats = np.arange(256, dtype=np.uint8)
    targets = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
               "uint8", "bool", "complex64"] + NAMES
    bad = []
    for target in targets:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            t = torch.from_numpy(pats.copy()).view(getattr(torch, name)).to(getattr(torch, target))
            e = ember.tensor(pats, device=DEVICE).view(getattr(ember, name)).to(
                getattr(ember, target)).cpu()
        if target == "complex64":
            t, e = torch.view_as_real(t), ember.view_as_real(e)
        if target == "bfloat16":
            t, e = t.view(torch.int16), e.view(ember.int16)
        elif t.dtype.is_floating_point:  # bits: NaN payloads and signs count
            width = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}[t.dtype.itemsize]
            t, e = t.view(getattr(torch, width)), e.view(getattr(ember, width))
        if t.tolist() != e.tolist():
            bad.append(target)
    assert not bad


@pytest.mark.parametrize("name", NAMES)
def test_creation_and_writes_round_as_casts(name):
    def run(lib):
        d = getattr(lib, name)
        vals = [0.0, -1.5, 3.0, 500.0, -1e6, float("nan"), float("inf"), 2.0 ** -130, 1.0625]
        x = lib.zeros(len(vals), dtype=d)
        x[1] = 5.5
        x[2:4] = lib.tensor([7.0, 600.0])
        y = lib.full((3,), 2.5, dtype=d)
        return (lib.tensor(vals, dtype=d), lib.as_tensor(vals, dtype=d), x, y,
                lib.zeros(2, dtype=d), lib.ones(2, 2, dtype=d), lib.eye(2, dtype=d),
                lib.full_like(y, 0.75), y.new_full((2,), 3.0), y.new_tensor([9.0]),
                lib.zeros(3, dtype=d).fill_(lib.tensor(300.0)),
                lib.where(lib.tensor([True, False]), lib.ones(2, dtype=d), 1e6),
                error_of(lambda: lib.full((2,), 1e6, dtype=d)),
                error_of(lambda: lib.zeros(2, dtype=d).fill_(-1e6)),
                error_of(lambda: lib.zeros(2, dtype=d).fill_(float("inf"))),
                error_of(lambda: lib.full((2,), 0.0, dtype=d)),
                error_of(lambda: lib.nn.functional.pad(lib.ones(2, dtype=d), (1, 1))))
    t, e = _both(run)
    assert t == e


# ---- values of the ops that compute ---------------------------------------------------------
_RNG = np.random.default_rng(1)
_A = (_RNG.standard_normal((4, 6)) * 30).astype(np.float32)
_A[0, 0], _A[1, 1], _A[2, 2] = np.nan, 1e6, 0.0
_B = (_RNG.standard_normal((4, 6)) * 30).astype(np.float32)

VALUE_OPS = {
    "mul": lambda L, a, b: a * b,
    "mul_bcast": lambda L, a, b: a * b[:1],
    "matmul": lambda L, a, b: a @ b.t(),
    "vec_mat": lambda L, a, b: a[0] @ b.t(),
    "outer": lambda L, a, b: L.outer(a[0], b[1]),
    "linear": lambda L, a, b: L.nn.functional.linear(a, b),
    "linear_bias": lambda L, a, b: L.nn.functional.linear(a, b, b[0, :4]),
    "where": lambda L, a, b: L.where(a.isnan(), b, a),
    "where_scalar": lambda L, a, b: L.where(a.isnan(), 3.0, a),
    "cat": lambda L, a, b: L.cat([a, b], 1),
    "stack": lambda L, a, b: L.stack([a, b]),
    "abs": lambda L, a, b: a.abs(),
    "compare": lambda L, a, b: (a == b, a == 0.0, a != a, a.isnan()),
    "any_all": lambda L, a, b: (a.any(), a.all(), a.any(1)),
    "sum_dtype": lambda L, a, b: (a.sum(dtype=L.float32), a.sum(0, dtype=L.float32)),
    "index_select": lambda L, a, b: a.index_select(1, L.tensor([0, 3, 3])),
    "masked_select": lambda L, a, b: a.masked_select(L.tensor(_B > 0)),
    "embedding": lambda L, a, b: L.nn.functional.embedding(L.tensor([[0, 3], [1, 1]]), a),
    "getitem": lambda L, a, b: (a[1:, ::2], a[L.tensor([2, 0])], a[..., 1],
                                a[L.tensor(_B > 0)]),
    "setitem": lambda L, a, b: _set(a.clone(), (slice(0, 2), 1), b[0, :2]),
    "setitem_number": lambda L, a, b: _set(a.clone(), (slice(0, 2), 1), 1e4),
    "setitem_list": lambda L, a, b: _set(a.clone(), ([0, 2],), b[1]),
    "copy_": lambda L, a, b: (a.clone().copy_(L.tensor(_B)), a.clone().copy_(b.t().t())),
    "contiguous": lambda L, a, b: (a.t().contiguous(), a.t().clone()),
    "equal": lambda L, a, b: (L.equal(a, a.clone()), L.equal(a, b),
                              error_of(lambda: L.equal(a, a))),
    "shape_ops": lambda L, a, b: (a.roll(2, 1), a.repeat_interleave(2, 0), a.diagonal(),
                                  a[0].diag(), a.unflatten(1, (2, 3)), a.split([2, 4], 1),
                                  a.as_strided((2, 2), (1, 2)), a.unfold(1, 2, 2)),
    "bincount": lambda L, a, b: L.bincount(L.tensor([0, 2, 2, 5, 1, 0]), a[1]),
    "dropout": lambda L, a, b: (L.nn.functional.dropout(a, 0.0),
                                L.nn.functional.dropout(a, 0.5, training=False)),
    "pad": lambda L, a, b: L.nn.functional.pad(a, (1, 2), value=3.0),
    "views": lambda L, a, b: (a.view(L.uint8), a.view(L.int16), a.view(L.float32)),
    "items": lambda L, a, b: [a[1, 0].item(), a[0, 1].tolist(), float(a[1, 2]),
                              bool(a[2, 2]), int(a[1, 3])],
    "to": lambda L, a, b: (a.to(a.dtype) is a, a.to(L.float8_e5m2fnuz), a.double()),
    "scatters": lambda L, a, b: (L.select_scatter(a, b[0], 0, 1),
                                 L.slice_scatter(a, b[:1], 0, 0, 1)),
}


@pytest.mark.parametrize("name", NAMES)
def test_values_of_supported_ops(name):
    bad = []
    for key, op in VALUE_OPS.items():
        def run(lib):
            d = getattr(lib, name)
            return op(lib, lib.tensor(_A).to(d), lib.tensor(_B).to(d))
        t, e = _both(run)
        if t != e:
            bad.append((key, t, e))
    assert not bad, "\\n".join(f"{k}: torch {str(t)[:200]} / ember {str(e)[:200]}"
                               for k, t, e in bad[:5])


# ---- printing, save/load, autograd -----------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("values", [
    [0.0, 1.0, -2.5, 448.0, 1e-3, float("nan"), float("inf"), 0.015625, 100.0, 3.0],
    [0.0, 1.0, 2.0], [0.25, 1, 2], [1e-3, 100.0], [5.0, 0.0], [2.0 ** 127, 1.0], [],
    [[1.5, -2.0], [0.125, 64.0]],
])
def test_printing(name, values):
    t, e = _both(lambda lib: (repr(lib.tensor(values).to(getattr(lib, name))),
                              str(lib.tensor(values).to(getattr(lib, name))[..., :1])))
    assert t == e


@pytest.mark.parametrize("name", NAMES)
def test_save_load_and_torch_checkpoints(name):
    x = ember.tensor(_A, device=DEVICE).to(getattr(ember, name))
    buf = io.BytesIO()
    ember.save({"x": x, "view": x[1:, 2:]}, buf)
    buf.seek(0)
    back = ember.load(buf)
    assert back["x"].dtype is x.dtype
    assert back["x"].view(ember.uint8).tolist() == x.view(ember.uint8).tolist()
    assert back["view"].view(ember.uint8).tolist() == x[1:, 2:].view(ember.uint8).tolist()
    t = torch.tensor(_A).to(getattr(torch, name))
    buf = io.BytesIO()
    torch.save({"t": t, "v": t[1:]}, buf)
    buf.seek(0)
    back = ember.load(buf)
    assert str(back["t"].dtype).split(".")[-1] == name
    assert back["t"].view(ember.uint8).tolist() == t.view(torch.uint8).tolist()
    assert back["v"].view(ember.uint8).tolist() == t[1:].view(torch.uint8).tolist()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_through_float8_casts(name, dtype):
    """A float8 round trip in a graph (a quantize-dequantize step): values and gradients; the
    gradient of a cast is the incoming one cast back, as in torch."""
    x = (np.random.default_rng(2).standard_normal((3, 4)) * 4).astype(dtype)

    def fn(lib, a):
        q = a.to(getattr(lib, name))
        return q.to(a.dtype) * a

    compare(fn, x)
    # a float32 product of float64 inputs: judged at float32's tolerance (the sums' rounding
    # follows the BLAS kernel the CPU selects)
    compare(lambda lib, a: (a.to(getattr(lib, name)).to(lib.float32) @ a.t().float()), x,
            rtol=1e-6 if dtype == np.float64 else None, atol=1e-6 if dtype == np.float64 else None)


@pytest.mark.parametrize("name", NAMES)
def test_assert_close_and_numpy_interop(name):
    def run(lib):
        d = getattr(lib, name)
        one, other = lib.ones(2, 3, dtype=d), lib.tensor([[1.0, 4.0, 1.0], [1.0, 1.0, 2.0]])
        pairs = [(one, other.to(d), {}), (one, one.clone(), {}),
                 (one, other.to(d), dict(rtol=0.1, atol=0.1)),
                 (lib.tensor(1.0).to(d), lib.tensor(2.0).to(d), {}),
                 (lib.tensor([float("nan")]).to(d), lib.tensor([float("nan")]).to(d), {})]
        return ([error_of(lambda: lib.testing.assert_close(a, b, **kw)) for a, b, kw in pairs],
                error_of(lambda: one.numpy()), error_of(lambda: np.asarray(one)))
    t, e = _both(run)
    if DEVICE is not None:  # (a device tensor refuses NumPy for its own reason)
        t, e = t[1][0], e[1][0]
    assert t == e


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("call", ["addmm", "addmm_scaled", "addmm_broadcast", "addmm_",
                                  "baddbmm"])
def test_addmm_computes_in_float32_and_baddbmm_refuses(name, call):
    def run(lib):
        dt = getattr(lib, name)
        a = lib.tensor([[1.0, 2.0], [3.0, 0.5]]).to(dt)
        b = lib.tensor([[0.5, 1.0], [1.5, 2.0]]).to(dt)
        c = lib.tensor([[0.25, 0.125], [1.0, 3.0]]).to(dt)
        return {"addmm": lambda: lib.addmm(c, a, b),
                "addmm_scaled": lambda: lib.addmm(c, a, b, beta=0.5, alpha=2),
                "addmm_broadcast": lambda: lib.addmm(c[0], a, b),
                "addmm_": lambda: c.clone().addmm_(a, b),
                "baddbmm": lambda: lib.baddbmm(c[None], a[None], b[None])}[call]()
    theirs, ours = _both(run)
    assert ours == theirs
