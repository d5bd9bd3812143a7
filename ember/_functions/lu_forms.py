"""PyTorch's older top-level forms of the linalg LU family (``ember/linalg/_lu.py``,
``_conditioning.py``)."""
from __future__ import annotations

from .._registry import op
from ..linalg import _lu as _LLU, _conditioning as _LCOND

lu = op(_LLU.lu, out=True)
lu_solve = op(_LLU.lu_solve, out=True)
lu_unpack = op(_LLU.lu_unpack, method=False, out=True)
triangular_solve = op(_LLU.triangular_solve, out=True)
svd_lowrank = op(_LCOND.svd_lowrank, method=False)
pca_lowrank = op(_LCOND.pca_lowrank, method=False)

__all__ = ["lu", "lu_solve", "lu_unpack", "triangular_solve", "svd_lowrank", "pca_lowrank"]
