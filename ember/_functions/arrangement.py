"""Declarations of the arrangement, scatter and statistics families (ops in
``_ops/arrangement.py``, ``_ops/scatter_family.py``, ``_ops/statistics*.py``)."""
from __future__ import annotations

from .._ops import arrangement as _AR, scatter_family as _SF
from .._ops import statistics as _ST, statistics_counts as _SC, statistics_moments as _SM
from .._registry import op, method as _method

# ---- arrangement and scatter family (ops in _ops/arrangement.py, _ops/scatter_family.py) -------

tensor_split = op(_AR.tensor_split)
hsplit = op(_AR.hsplit)
vsplit = op(_AR.vsplit)
dsplit = op(_AR.dsplit)
atleast_1d = op(_AR.atleast_1d, method=False)
atleast_2d = op(_AR.atleast_2d, method=False)
atleast_3d = op(_AR.atleast_3d, method=False)
hstack = op(_AR.hstack, method=False, out=True)
vstack = op(_AR.vstack, method=False, out=True)
row_stack = op(_AR.row_stack, method=False, out=True)
dstack = op(_AR.dstack, method=False, out=True)
column_stack = op(_AR.column_stack, method=False, out=True)
block_diag = op(_AR.block_diag, method=False)
cartesian_prod = op(_AR.cartesian_prod, method=False)
combinations = op(_AR.combinations, method=False)
rot90 = op(_AR.rot90)
flipud = op(_AR.flipud)
fliplr = op(_AR.fliplr)
diagflat = op(_AR.diagflat)
argwhere = op(_AR.argwhere)
vander = op(_AR.vander, method=False)
tril_indices = op(_AR.tril_indices, method=False)
triu_indices = op(_AR.triu_indices, method=False)

select_scatter = op(_SF.select_scatter)
slice_scatter = op(_SF.slice_scatter, out=True)
diagonal_scatter = op(_SF.diagonal_scatter)
index_put = op(_SF.index_put, inplace=True)
put = op(_SF.put, inplace=True)
masked_scatter = op(_SF.masked_scatter)
_method(_SF.masked_scatter_)
index_fill = op(_SF.index_fill, inplace=True)
_method(_SF.fill_diagonal_)
scatter_reduce = op(_SF.scatter_reduce, inplace=True, out=True)
index_reduce = op(_SF.index_reduce, inplace=True, out=True)

__all__ = ["tensor_split", "hsplit", "vsplit", "dsplit", "atleast_1d", "atleast_2d",
            "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
            "block_diag", "cartesian_prod", "combinations", "rot90", "flipud", "fliplr",
            "diagflat", "argwhere", "vander", "tril_indices", "triu_indices", "select_scatter",
            "slice_scatter", "diagonal_scatter", "index_put", "put", "masked_scatter",
            "index_fill", "scatter_reduce", "index_reduce"]


# ---- statistics, counting, histograms (ops in _ops/statistics*.py) --------------------------

bincount = op(_SC.bincount)
histc = op(_SC.histc, out=True)
histogram = op(_SC.histogram, out=True)
cummax = op(_ST.cummax, out=True)
cummin = op(_ST.cummin, out=True)
logcumsumexp = op(_ST.logcumsumexp, out=True)
nansum = op(_ST.nansum, out=True)
nanmean = op(_ST.nanmean, out=True)
median = op(_ST.median, out=True)
nanmedian = op(_ST.nanmedian, out=True)
quantile = op(_ST.quantile, out=True)
nanquantile = op(_ST.nanquantile, out=True)
aminmax = op(_ST.aminmax, out=True)
count_nonzero = op(_SC.count_nonzero)
kthvalue = op(_ST.kthvalue, out=True)
mode = op(_ST.mode, out=True)
msort = op(_ST.msort, out=True)
isin = op(_SC.isin, method=False, out=True)
cov = op(_SM.cov)
corrcoef = op(_SM.corrcoef)
trapezoid = op(_SM.trapezoid, method=False)
trapz = op(_SM.trapz, method=False)
cumulative_trapezoid = op(_SM.cumulative_trapezoid, method=False)
renorm = op(_SM.renorm, out=True, inplace=True)

__all__ += ["bincount", "histc", "histogram", "cummax", "cummin", "logcumsumexp", "nansum",
            "nanmean", "median", "nanmedian", "quantile", "nanquantile", "aminmax",
            "count_nonzero", "kthvalue", "mode", "msort", "isin", "cov", "corrcoef",
            "trapezoid", "trapz", "cumulative_trapezoid", "renorm"]
