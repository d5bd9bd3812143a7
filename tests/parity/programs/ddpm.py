"""A small DDPM: linear beta schedule (linspace, cumprod, gather by timestep), sinusoidal
time embedding, a two-level conv U-Net with GroupNorm, SiLU, time conditioning broadcast
over the feature map, nearest upsampling and skip concatenation, epsilon-prediction MSE
trained by AdamW under a OneCycleLR schedule; an exponential moving average of the weights
kept by torch.optim.swa_utils.AveragedModel with get_ema_multi_avg_fn and by hand with
torch._foreach_mul_/_foreach_add_ and lerp_; then ancestral sampling with the EMA model.
The noise comes from NumPy so both libraries see the same draws."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import copy
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from common_init import det_init

T = 20
betas = torch.linspace(1e-4, 0.2, T)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)
alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
sqrt_ac, sqrt_1m_ac = alphas_cumprod.sqrt(), (1.0 - alphas_cumprod).sqrt()
posterior_var = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)

def extract(a, t, shape):
    return a.gather(-1, t).reshape(t.shape[0], *((1,) * (len(shape) - 1)))

def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(2, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2, self.conv2 = nn.GroupNorm(2, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()
    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)

class UNet(nn.Module):
    def __init__(self, ch=8, tdim=16):
        super().__init__()
        self.tdim = tdim
        self.time_mlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inc = nn.Conv2d(1, ch, 3, padding=1)
        self.down = ResBlock(ch, ch, tdim)
        self.pool = nn.AvgPool2d(2)
        self.mid = ResBlock(ch, 2 * ch, tdim)
        self.up = ResBlock(3 * ch, ch, tdim)
        self.out = nn.Sequential(nn.GroupNorm(2, ch), nn.SiLU(), nn.Conv2d(ch, 1, 3, padding=1))
    def forward(self, x, t):
        temb = self.time_mlp(timestep_embedding(t, self.tdim))
        h1 = self.down(self.inc(x), temb)
        h2 = self.mid(self.pool(h1), temb)
        h = torch.cat([F.interpolate(h2, scale_factor=2, mode="nearest"), h1], dim=1)
        return self.out(self.up(h, temb))

rs = np.random.RandomState(0)
data = torch.from_numpy(np.tanh(rs.randn(16, 1, 8, 8)).astype("float32"))
model = UNet(); det_init(model, 0, 0.15)
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
manual_ema = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
steps = 8
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=5e-3, total_steps=steps, pct_start=0.25)
for step in range(steps):
    idx = torch.from_numpy(rs.randint(0, 16, 8))
    x0 = data[idx]
    t = torch.from_numpy(rs.randint(0, T, 8)).long()
    noise = torch.from_numpy(rs.randn(8, 1, 8, 8).astype("float32"))
    xt = extract(sqrt_ac, t, x0.shape) * x0 + extract(sqrt_1m_ac, t, x0.shape) * noise
    loss = F.mse_loss(model(xt, t), noise)
    opt.zero_grad()
    loss.backward()
    opt.step(); sched.step()
    ema.update_parameters(model)
    with torch.no_grad():
        ema_params = list(manual_ema.parameters())
        torch._foreach_mul_(ema_params, 0.9)
        torch._foreach_add_(ema_params, list(model.parameters()), alpha=0.1)
    print("step", step, "%.6f %.6f" % (loss.item(), sched.get_last_lr()[0]))
diff = max((a - b).abs().max().item() for a, b in
           zip(ema.module.parameters(), manual_ema.parameters()))
print("ema vs manual ema %.6f" % diff, "n_averaged", int(ema.n_averaged))
lerped = copy.deepcopy(model)
with torch.no_grad():
    for p, q in zip(lerped.parameters(), manual_ema.parameters()):
        p.lerp_(q, 0.5)
print("lerp %.6f" % sum(p.sum().item() for p in lerped.parameters()))

@torch.no_grad()
def sample(net, n):
    x = torch.from_numpy(rs.randn(n, 1, 8, 8).astype("float32"))
    for i in reversed(range(T)):
        t = torch.full((n,), i, dtype=torch.long)
        eps = net(x, t)
        coef = extract(betas, t, x.shape) / extract(sqrt_1m_ac, t, x.shape)
        mean = (x - coef * eps) / extract(alphas, t, x.shape).sqrt()
        if i > 0:
            z = torch.from_numpy(rs.randn(*x.shape).astype("float32"))
            x = mean + extract(posterior_var, t, x.shape).sqrt() * z
        else:
            x = mean
    return x.clamp(-1, 1)

ema.eval()
samples = sample(ema.module, 3)
print("samples %.5f %.5f %.5f" % (samples.mean().item(), samples.std().item(),
                                  samples.abs().max().item()))
