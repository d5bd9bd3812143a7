"""Named tuples returned by ops with several results (``ember.max(x, dim)``...)."""
from collections import namedtuple

max = namedtuple("max", ["values", "indices"])
min = namedtuple("min", ["values", "indices"])
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
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
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
