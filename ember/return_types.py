"""Named tuples returned by ops with several results (``ember.max(x, dim)``...).

They behave as PyTorch's structseqs (``torch.return_types.max``): built from one sequence
(``max((values, indices))``) as well as from the fields, and printed one field per line.

>>> import ember
>>> r = ember.return_types.max((ember.tensor([2.]), ember.tensor([0])))
>>> r.values
tensor([2.])
"""
from collections import namedtuple as _namedtuple


def namedtuple(name, fields):
    """A named tuple class ``name`` that also takes PyTorch's structseq arguments."""
    base = _namedtuple(name, fields)
    n = len(fields)

    def __new__(cls, *args, **kwargs):
        if (not kwargs and 1 <= len(args) <= 2 and isinstance(args[0], (tuple, list))
                and len(args[0]) == n and (len(args) == 1 or isinstance(args[1], dict))):
            return base.__new__(cls, *args[0])
        return base.__new__(cls, *args, **kwargs)

    def __repr__(self):
        inner = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"ember.return_types.{name}(\n{inner})"

    return type(name, (base,), {"__slots__": (), "__new__": __new__, "__repr__": __repr__,
                                "__module__": __name__, "__doc__": base.__doc__})


max = namedtuple("max", ["values", "indices"])
min = namedtuple("min", ["values", "indices"])
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])
# matrix functions (ember.linalg and the older top-level forms)
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])
linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
qr = namedtuple("qr", ["Q", "R"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
svd = namedtuple("svd", ["U", "S", "V"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
geqrf = namedtuple("geqrf", ["a", "tau"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"])
_lu_with_info = namedtuple("_lu_with_info", ["LU", "pivots", "info"])
lu_unpack = namedtuple("lu_unpack", ["P", "L", "U"])
triangular_solve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
linalg_ldl_factor = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
# statistics (_ops/statistics.py)
histogram = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])
cummax = namedtuple("cummax", ["values", "indices"])
cummin = namedtuple("cummin", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
mode = namedtuple("mode", ["values", "indices"])
aminmax = namedtuple("aminmax", ["min", "max"])
