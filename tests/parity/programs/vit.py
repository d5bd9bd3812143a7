"""A small Vision Transformer (patch embedding by Conv2d and by unfold, class token,
learned position embedding, nn.TransformerEncoder with norm_first=True and GELU, LayerNorm
head) trained with AdamW + a linear-warmup LambdaLR; then attention pooling and a top-2
mixture-of-experts layer written with einsum, masked_fill, softmax and topk."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

class ViT(nn.Module):
    def __init__(self, img=16, patch=4, dim=16, depth=2, heads=4, classes=5):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        n = (img // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=32, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, norm=nn.LayerNorm(dim),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)
    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos_embed
        return self.head(self.encoder(x)[:, 0])

rs = np.random.RandomState(0)
model = ViT(); det_init(model, 0, 0.2)
imgs = torch.from_numpy(rs.randn(6, 3, 16, 16).astype("float32"))
labels = torch.from_numpy(rs.randint(0, 5, 6))
decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embed" not in n]
no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embed" not in n)]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                         {"params": no_decay, "weight_decay": 0.0}], lr=3e-3, betas=(0.9, 0.95))
warmup, total = 2, 6
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: (s + 1) / warmup if s < warmup
    else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup))))
for step in range(total):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(imgs), labels, label_smoothing=0.1)
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=2.0)
    opt.step(); sched.step()
    print("vit", step, "%.6f %.6f %.6f" % (loss.item(), gn.item(), sched.get_last_lr()[0]))
# unfold patches == the conv embedding
p = F.unfold(imgs, kernel_size=4, stride=4)                       # (B, 3*16, 16)
w = model.patch_embed.weight.flatten(1)                           # (dim, 3*16)
emb = torch.einsum("dk,bkn->bnd", w, p) + model.patch_embed.bias
ref = model.patch_embed(imgs).flatten(2).transpose(1, 2)
print("unfold", (emb - ref).abs().max().item() < 1e-5, "%.5f" % emb.sum().item())
model.eval()
with torch.no_grad():
    print("eval", ["%.5f" % v for v in model(imgs[:2]).softmax(-1)[0].tolist()])

# attention pooling over padded sets, with a key padding mask
class AttnPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query = nn.Parameter(torch.zeros(dim))
        self.proj = nn.Linear(dim, dim)
    def forward(self, x, mask):                                     # x (B, L, D), mask (B, L)
        scores = torch.einsum("bld,d->bl", self.proj(x), self.query) / math.sqrt(x.size(-1))
        scores = scores.masked_fill(~mask, float("-inf"))
        attn = scores.softmax(dim=-1)
        return torch.einsum("bl,bld->bd", attn, x), attn
pool = AttnPool(8); det_init(pool, 1, 0.5)
x = torch.from_numpy(rs.randn(3, 5, 8).astype("float32")).requires_grad_()
mask = torch.arange(5)[None, :] < torch.tensor([5, 2, 3])[:, None]
out, attn = pool(x, mask)
out.square().sum().backward()
print("pool %.6f %.6f %.6f" % (out.sum().item(), x.grad.abs().sum().item(),
                              pool.query.grad.abs().sum().item()), attn[1].tolist()[2:])
# scaled_dot_product_attention with a causal mask == the explicit formula
q, k, v = torch.from_numpy(rs.randn(3, 2, 2, 6, 4).astype("float32")).unbind(0)
sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=True)
causal = torch.ones(6, 6, dtype=torch.bool).tril()
manual = (q @ k.transpose(-2, -1) / 2.0).masked_fill(~causal, float("-inf")).softmax(-1) @ v
print("sdpa %.6f" % sdpa.sum().item(), (sdpa - manual).abs().max().item() < 1e-5)

# top-2 mixture of experts
class MoE(nn.Module):
    def __init__(self, dim, n_exp=4, k=2):
        super().__init__()
        self.gate = nn.Linear(dim, n_exp, bias=False)
        self.w1 = nn.Parameter(torch.zeros(n_exp, dim, 12))
        self.w2 = nn.Parameter(torch.zeros(n_exp, 12, dim))
        self.k = k
    def forward(self, x):                                           # (T, D)
        logits = self.gate(x)
        topv, topi = logits.topk(self.k, dim=-1)
        weights = torch.full_like(logits, float("-inf")).scatter(-1, topi, topv).softmax(-1)
        h = F.silu(torch.einsum("td,edh->teh", x, self.w1))
        y = torch.einsum("teh,ehd->ted", h, self.w2)
        aux = (logits.softmax(-1).mean(0) * F.one_hot(topi[:, 0], 4).float().mean(0)).sum() * 4
        return torch.einsum("te,ted->td", weights, y), aux, topi
moe = MoE(8); det_init(moe, 2, 0.3)
opt = torch.optim.Adam(moe.parameters(), lr=1e-2)
tokens = torch.from_numpy(rs.randn(10, 8).astype("float32"))
for step in range(3):
    opt.zero_grad()
    y, aux, topi = moe(tokens)
    loss = F.smooth_l1_loss(y, tokens, beta=0.5) + 0.01 * aux
    loss.backward(); opt.step()
    print("moe", step, "%.6f %.6f" % (loss.item(), aux.item()),
          torch.bincount(topi.flatten(), minlength=4).tolist())
