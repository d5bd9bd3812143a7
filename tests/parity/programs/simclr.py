"""SimCLR on tiny synthetic images: two augmented views per image (NumPy-drawn crops via
F.pad + slicing, horizontal flips with torch.flip on a boolean index, brightness jitter),
a small conv encoder with BatchNorm2d and AdaptiveAvgPool2d plus an MLP projection head,
the NT-Xent loss (F.normalize, a 2N x 2N cosine-similarity matrix, the diagonal masked_fill'd
with -inf through torch.eye(dtype=bool), cross_entropy against arange labels rolled by N),
trained by a LARS optimizer written as a torch.optim.Optimizer subclass (@torch.no_grad()
step, per-parameter momentum buffers in self.state, a per-group flag that skips the trust
ratio and weight decay for biases and norms, a closure), with LinearLR warmup + cosine
annealing chained by SequentialLR, the optimizer's state_dict round trip, add_param_group
and a step post-hook; then a weighted kNN monitor (topk over similarities, one_hot votes,
scatter_add_) and a linear probe on the frozen encoder trained with LBFGS; then BYOL: a
deep-copied target updated by torch._foreach_lerp_, a custom autograd.Function scaling the
gradient, a tensor hook, AdamW(amsgrad), cosine_similarity by broadcasting, cdist, logsumexp
and SyncBatchNorm.convert_sync_batchnorm."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import copy
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer
from common_init import det_init


class LARS(Optimizer):
    """SGD with momentum where each layer's step is scaled by a trust ratio."""

    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=1e-4, eta=0.001,
                 exclude_from_lars=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, momentum=momentum, weight_decay=weight_decay, eta=eta,
                        exclude_from_lars=exclude_from_lars)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                d_p = p.grad
                if not group["exclude_from_lars"]:
                    d_p = d_p.add(p, alpha=group["weight_decay"])
                    param_norm = torch.norm(p)
                    update_norm = torch.norm(d_p)
                    trust_ratio = torch.where(
                        (param_norm > 0) & (update_norm > 0),
                        group["eta"] * param_norm / update_norm, torch.ones_like(param_norm))
                    d_p = d_p.mul(trust_ratio)
                state = self.state[p]
                if "momentum_buffer" not in state:
                    buf = state["momentum_buffer"] = torch.clone(d_p).detach()
                else:
                    buf = state["momentum_buffer"]
                    buf.mul_(group["momentum"]).add_(d_p)
                p.add_(buf, alpha=-group["lr"])
        return loss


class Encoder(nn.Module):
    def __init__(self, width=8, feat_dim=16, proj_dim=8):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width),
            nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
            nn.Linear(2 * width, feat_dim))
        self.projector = nn.Sequential(nn.Linear(feat_dim, feat_dim), nn.ReLU(inplace=True),
                                       nn.Linear(feat_dim, proj_dim))

    def forward(self, x):
        h = self.backbone(x)
        return h, self.projector(h)


def nt_xent(z1, z2, temperature=0.5):
    n = z1.size(0)
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = torch.matmul(z, z.T) / temperature
    self_mask = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    sim = sim.masked_fill(self_mask, float("-inf"))
    labels = torch.arange(2 * n, device=z.device).roll(n)
    loss = F.cross_entropy(sim, labels)
    acc = (sim.argmax(dim=1) == labels).float().mean()
    return loss, acc


rs = np.random.RandomState(0)
N_IMG, SIZE = 48, 10
classes = rs.randint(0, 3, N_IMG)
yy, xx = np.mgrid[0:SIZE, 0:SIZE]
patterns = np.stack([np.sin(xx / 1.5), np.sin(yy / 1.5), np.sin((xx + yy) / 2.0)])
images = torch.from_numpy((patterns[classes] + 0.3 * rs.randn(N_IMG, SIZE, SIZE))
                          .astype(np.float32)).unsqueeze(1)
labels_all = torch.from_numpy(classes)


def augment(x):
    b = x.size(0)
    padded = F.pad(x, (2, 2, 2, 2), mode="reflect")
    offs = rs.randint(0, 5, size=(b, 2))
    crops = torch.stack([padded[i, :, oy:oy + SIZE, ox:ox + SIZE]
                         for i, (oy, ox) in enumerate(offs)])
    flip = torch.from_numpy(rs.rand(b) < 0.5)
    crops[flip] = torch.flip(crops[flip], dims=[3])
    scale = torch.from_numpy(rs.uniform(0.8, 1.2, size=(b, 1, 1, 1)).astype(np.float32))
    return crops * scale


model = Encoder()
det_init(model, 2, 0.3)
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim == 1 else decay).append(p)
optimizer = LARS([{"params": decay}], lr=0.5, momentum=0.9, weight_decay=1e-4)
optimizer.add_param_group({"params": no_decay, "exclude_from_lars": True, "lr": 0.05})
print("groups", [len(g["params"]) for g in optimizer.param_groups],
      [g["exclude_from_lars"] for g in optimizer.param_groups],
      [g["momentum"] for g in optimizer.param_groups])
steps_seen = []
handle = optimizer.register_step_post_hook(lambda opt, args, kwargs: steps_seen.append(1))
epochs, warm = 8, 2
scheduler = torch.optim.lr_scheduler.SequentialLR(
    optimizer, schedulers=[
        torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.25, total_iters=warm),
        torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs - warm, eta_min=1e-3)],
    milestones=[warm])

for epoch in range(epochs):
    model.train()
    perm = rs.permutation(N_IMG)
    for start in range(0, N_IMG, 16):
        batch = images[torch.from_numpy(perm[start:start + 16])]
        v1, v2 = augment(batch), augment(batch)

        def closure():
            optimizer.zero_grad()
            _, z1 = model(v1)
            _, z2 = model(v2)
            loss, acc = nt_xent(z1, z2, temperature=0.5)
            loss.backward()
            closure.acc = acc
            return loss

        loss = optimizer.step(closure)
    scheduler.step()
    print("epoch", epoch, "loss %.5f acc %.4f lr %.5f %.5f" % (
        loss.item(), closure.acc.item(), *scheduler.get_last_lr()))
handle.remove()
print("post hook calls", len(steps_seen))

state = optimizer.state_dict()
print("state entries", len(state["state"]), sorted(state["state"][0].keys()),
      state["param_groups"][1]["params"][:3])
fresh = LARS([{"params": decay}], lr=0.5)
fresh.add_param_group({"params": no_decay, "exclude_from_lars": True, "lr": 0.05})
fresh.load_state_dict(state)
buf_diff = max((fresh.state[p]["momentum_buffer"] - optimizer.state[p]["momentum_buffer"])
               .abs().max().item() for p in decay + no_decay)
print("reloaded lr %.5f buf diff %.6f" % (fresh.param_groups[0]["lr"], buf_diff))


@torch.no_grad()
def knn_predict(feature, bank, bank_labels, classes=3, k=5, t=0.1):
    sim = torch.mm(feature, bank.T)
    sim_weight, sim_idx = sim.topk(k=k, dim=-1)
    sim_labels = torch.gather(bank_labels.expand(feature.size(0), -1), dim=-1, index=sim_idx)
    sim_weight = (sim_weight / t).exp()
    one_hot = torch.zeros(feature.size(0) * k, classes)
    one_hot = one_hot.scatter_(dim=-1, index=sim_labels.view(-1, 1), value=1.0)
    scores = torch.sum(one_hot.view(feature.size(0), -1, classes)
                       * sim_weight.unsqueeze(dim=-1), dim=1)
    votes = torch.zeros(feature.size(0), classes).scatter_add_(
        1, sim_labels, torch.ones_like(sim_labels, dtype=torch.float32))
    return scores.argsort(dim=-1, descending=True), votes


model.eval()
with torch.no_grad():
    feats = F.normalize(model(images)[0], dim=1)
bank, bank_labels = feats[:32], labels_all[:32]
ranking, votes = knn_predict(feats[32:], bank, bank_labels)
knn_acc = (ranking[:, 0] == labels_all[32:]).float().mean().item()
print("knn acc %.4f votes" % knn_acc, votes.sum(0).tolist(),
      "onehot", F.one_hot(labels_all[:6], num_classes=3).sum(0).tolist())

model.requires_grad_(False)
probe = nn.Linear(16, 3)
det_init(probe, 3, 0.1)
lbfgs = torch.optim.LBFGS(probe.parameters(), lr=0.5, max_iter=10, history_size=5,
                          line_search_fn="strong_wolfe")
train_feats, train_y = feats[:32].detach(), labels_all[:32]


def probe_closure():
    lbfgs.zero_grad()
    loss = F.cross_entropy(probe(train_feats), train_y) + 1e-3 * probe.weight.pow(2).sum()
    loss.backward()
    return loss


for it in range(3):
    loss = lbfgs.step(probe_closure)
    print("probe", it, "loss %.5f" % loss.item(), "func evals",
          lbfgs.state[lbfgs._params[0]]["func_evals"])
with torch.no_grad():
    pred = probe(feats[32:]).argmax(1)
print("probe acc %.4f" % (pred == labels_all[32:]).float().mean().item(),
      "frozen grads", all(p.grad is None for p in model.parameters()))

# ---- BYOL-style target network, a custom autograd Function, gradient hooks ----
class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale, None


def byol_loss(p, z):
    p = F.normalize(p, dim=-1, p=2)
    z = F.normalize(z, dim=-1, p=2)
    return 2 - 2 * (p * z).sum(dim=-1)


online = Encoder()
det_init(online, 4, 0.3)
target = copy.deepcopy(online)
for param in target.parameters():
    param.requires_grad = False
predictor = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 8))
det_init(predictor, 6, 0.3)
byol_opt = torch.optim.AdamW(list(online.parameters()) + list(predictor.parameters()),
                             lr=3e-3, weight_decay=0.05, amsgrad=True)
grad_norms = []
online.projector[0].weight.register_hook(lambda g: grad_norms.append(g.norm().item()))
tau = 0.9
for it in range(4):
    batch = images[torch.from_numpy(rs.choice(N_IMG, 16, replace=False))]
    v1, v2 = augment(batch), augment(batch)
    _, z1 = online(v1)
    _, z2 = online(v2)
    p1 = predictor(ScaleGrad.apply(z1, 0.5))
    p2 = predictor(ScaleGrad.apply(z2, 0.5))
    with torch.no_grad():
        t1, t2 = target(v1)[1], target(v2)[1]
    loss = (byol_loss(p1, t2) + byol_loss(p2, t1)).mean()
    byol_opt.zero_grad()
    loss.backward()
    byol_opt.step()
    with torch.no_grad():
        online_params = [p for p in online.parameters()]
        target_params = [p for p in target.parameters()]
        torch._foreach_lerp_(target_params, online_params, 1 - tau)
        for tb, ob in zip(target.buffers(), online.buffers()):
            tb.copy_(ob)
    print("byol", it, "loss %.5f grad %.5f" % (loss.item(), grad_norms[-1]))

with torch.no_grad():
    za = F.normalize(target(images[:8])[1], dim=1)
    zb = F.normalize(online(images[:8])[1], dim=1)
cos = F.cosine_similarity(za.unsqueeze(1), zb.unsqueeze(0), dim=-1)
dists = torch.cdist(za, zb, p=2)
print("cos %.5f diag %.5f" % (cos.mean().item(), cos.diagonal().mean().item()),
      "cdist %.5f" % dists.mean().item(),
      "identity %.5f" % (dists.pow(2) - (2 - 2 * cos)).abs().max().item(),
      "lse %.5f" % torch.logsumexp(cos / 0.2, dim=1).mean().item())
sync = nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(online))
print("sync bn", sum(isinstance(m, nn.SyncBatchNorm) for m in sync.modules()),
      "%.5f" % sum(b.sum().item() for n, b in sync.named_buffers() if "running_mean" in n))
