"""Deterministic weights from NumPy, so both libraries start from the same point."""
import numpy as np, torch
def det_init(model, seed=0, scale=0.1):
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            p.copy_(torch.from_numpy((rs.randn(*p.shape) * scale).astype("float32")))
