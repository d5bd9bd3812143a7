"""Matrix products with an empty batch, rows, columns or summed dimension: PyTorch's shapes,
zeros where the summed dimension is empty, and zero-sized gradients of the right shapes."""
import numpy as np
import pytest
import torch

import ember

CASES = {
    "bmm_empty_batch": ("bmm", (0, 2, 3), (0, 3, 4)),
    "matmul_empty_batch": ("matmul", (0, 2, 3), (0, 3, 4)),
    "matmul_empty_rows_folded": ("matmul", (2, 0, 3), (3, 4)),
    "bmm_empty_sum": ("bmm", (2, 2, 0), (2, 0, 4)),
    "matmul_empty_sum_stacked": ("matmul", (2, 2, 0), (2, 0, 4)),
    "matmul_empty_sum_folded": ("matmul", (2, 2, 0), (0, 4)),
    "mm_empty_sum": ("mm", (2, 0), (0, 3)),
    "dot_empty": ("matmul", (0,), (0,)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_empty_products_match_torch(case, dtype):
    name, sa, sb = CASES[case]
    results = {}
    for lib in (torch, ember):
        dt = getattr(lib, dtype)
        a = lib.ones(*sa, dtype=dt, requires_grad=True)
        b = lib.ones(*sb, dtype=dt, requires_grad=True)
        out = getattr(lib, name)(a, b)
        out.float().sum().backward()
        results[lib] = [(tuple(t.shape), str(t.dtype).split(".")[-1], t.detach().float().numpy())
                        for t in (out, a.grad, b.grad)]
    for (ts, td, tv), (es, ed, ev) in zip(results[torch], results[ember]):
        assert (es, ed) == (ts, td)
        np.testing.assert_array_equal(ev, tv)
