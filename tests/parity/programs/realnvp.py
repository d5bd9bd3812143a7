"""A RealNVP normalizing flow on 2-D and 4-D toy data: affine coupling layers with
alternating binary masks (registered buffers), tanh-bounded log scales, log-determinants as
sums of log scales, an invertible 1x1 "LU-free" linear mixing layer whose log-det comes from
torch.linalg.slogdet, the base density as torch.distributions.MultivariateNormal and as
Independent(Normal), maximum-likelihood training by Adam with gradient-norm clipping and
ReduceLROnPlateau, then the inverse pass on NumPy-drawn z and round-trip checks."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import math
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Independent, MultivariateNormal, Normal
from common_init import det_init

rs = np.random.RandomState(0)


class Coupling(nn.Module):
    def __init__(self, dim, mask, hidden=16):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                 nn.Tanh(), nn.Linear(hidden, 2 * dim))
        self.scale = nn.Parameter(torch.ones(dim))

    def _params(self, x_masked):
        s, t = self.net(x_masked).chunk(2, dim=-1)
        s = self.scale * torch.tanh(s) * (1 - self.mask)
        return s, t * (1 - self.mask)

    def forward(self, x):
        s, t = self._params(x * self.mask)
        y = x * self.mask + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(dim=-1)

    def inverse(self, y):
        s, t = self._params(y * self.mask)
        x = y * self.mask + (1 - self.mask) * ((y - t) * torch.exp(-s))
        return x, -s.sum(dim=-1)


class InvertibleLinear(nn.Module):
    def __init__(self, dim):
        super().__init__()
        q, _ = torch.linalg.qr(torch.from_numpy(rs.randn(dim, dim).astype("float32")))
        self.weight = nn.Parameter(q)

    def forward(self, x):
        sign, logabsdet = torch.linalg.slogdet(self.weight)
        return x @ self.weight.T, logabsdet.expand(x.shape[0])

    def inverse(self, y):
        return y @ torch.linalg.inv(self.weight).T, -torch.linalg.slogdet(self.weight)[1]


class RealNVP(nn.Module):
    def __init__(self, dim, n_layers=4, base="mvn"):
        super().__init__()
        masks = [torch.arange(dim) % 2, 1 - torch.arange(dim) % 2]
        layers = []
        for i in range(n_layers):
            layers.append(Coupling(dim, masks[i % 2].float()))
            if i == 1 and dim > 2:
                layers.append(InvertibleLinear(dim))
        self.layers = nn.ModuleList(layers)
        self.register_buffer("loc", torch.zeros(dim))
        self.register_buffer("cov", torch.eye(dim))
        self.base_kind = base

    @property
    def base(self):
        if self.base_kind == "mvn":
            return MultivariateNormal(self.loc, covariance_matrix=self.cov)
        return Independent(Normal(self.loc, torch.ones_like(self.loc)), 1)

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det

    def log_prob(self, x):
        z, log_det = self(x)
        return self.base.log_prob(z) + log_det

    @torch.no_grad()
    def sample(self, z):
        for layer in reversed(self.layers):
            z, _ = layer.inverse(z)
        return z


def two_moons(n):
    t = rs.rand(n) * math.pi
    upper = rs.rand(n) < 0.5
    x = np.where(upper, np.cos(t), 1 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    return (np.stack([x, y], 1) + 0.05 * rs.randn(n, 2)).astype("float32")


for dim, base in ((2, "mvn"), (4, "independent")):
    if dim == 2:
        data = torch.from_numpy(two_moons(128))
    else:
        mix = rs.randn(4, 4) * 0.5 + np.eye(4)
        data = torch.from_numpy((rs.randn(128, 4) @ mix).astype("float32"))
    flow = RealNVP(dim, base=base)
    det_init(flow.layers, 7 + dim, 0.1)
    for layer in flow.layers:
        if isinstance(layer, Coupling):
            nn.init.ones_(layer.scale)
    opt = torch.optim.Adam(flow.parameters(), lr=5e-3)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5,
                                                         patience=0, threshold=0.05)
    for epoch in range(6):
        perm = torch.from_numpy(rs.permutation(128))
        total = 0.0
        for batch in perm.split(32):
            nll = -flow.log_prob(data[batch]).mean()
            opt.zero_grad()
            nll.backward()
            gn = torch.nn.utils.clip_grad_norm_(flow.parameters(), max_norm=5.0)
            opt.step()
            total += nll.item() * len(batch)
        plateau.step(total / 128)
        print("dim %d epoch %d nll %.6f gnorm %.5f lr %.6f" % (dim, epoch, total / 128, gn.item(),
                                                               opt.param_groups[0]["lr"]))
    with torch.no_grad():
        z, log_det = flow(data[:16])
        x_back = flow.sample(z)
        print("round trip ok", bool(torch.allclose(x_back, data[:16], atol=1e-4)))
        inv_ld = torch.zeros(16)
        for layer in reversed(flow.layers):
            z, ld = layer.inverse(z)
            inv_ld = inv_ld + ld
        print("log det fwd+inv %.2e" % (log_det + inv_ld).abs().max().item())
        zs = torch.from_numpy(rs.randn(256, dim).astype("float32"))
        samples = flow.sample(zs)
        print("samples mean", " ".join("%.5f" % v for v in samples.mean(0).tolist()))
        print("samples cov", " ".join("%.5f" % v for v in torch.cov(samples.T).flatten()[:3]))
        mvn = MultivariateNormal(torch.zeros(dim), scale_tril=torch.eye(dim) * 2.0)
        ind = Independent(Normal(torch.zeros(dim), torch.full((dim,), 2.0)), 1)
        print("bases %.6f %.6f" % (mvn.log_prob(zs[:4]).sum().item(),
                                   ind.log_prob(zs[:4]).sum().item()),
              "entropy %.6f %.6f" % (mvn.entropy().item(), ind.entropy().item()),
              tuple(ind.batch_shape), tuple(ind.event_shape))
        for layer in flow.layers:
            if isinstance(layer, InvertibleLinear):
                sign, lad = torch.linalg.slogdet(layer.weight)
                print("slogdet %.1f %.6f %.6f" % (sign.item(), lad.item(),
                                                  torch.logdet(layer.weight @ layer.weight.T)
                                                  .item()))
