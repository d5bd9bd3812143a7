"""A timm-style image classification recipe, shrunk: a ResNet-ish CNN with
squeeze-and-excitation blocks (AdaptiveAvgPool2d, sigmoid gating) and stochastic depth
(the drop decisions drawn by NumPy), mixup and cutmix (NumPy Beta draws, boxes pasted by
slicing), a hand-written label-smoothing soft-target cross entropy, SGD with nesterov and
parameter groups that exclude norms and biases from weight decay, a linear warmup then
cosine schedule by SequentialLR(LinearLR, CosineAnnealingLR), a ModelEmaV3-like weight
average with torch._foreach_lerp_/_foreach_mul_ and a decay warmup, gradient clipping by
value, top-1/top-5 accuracy by topk and a torch.jit.script'ed helper."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import copy
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

rs = np.random.RandomState(0)
NUM_CLASSES = 10


class SqueezeExcite(nn.Module):
    def __init__(self, channels, rd_ratio=0.25):
        super().__init__()
        rd = max(1, int(channels * rd_ratio))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, rd, 1)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(rd, channels, 1)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        s = self.fc2(self.act(self.fc1(self.pool(x))))
        return x * self.gate(s)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1, drop_path=0.0):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.se = SqueezeExcite(cout)
        self.drop_path = drop_path
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.se(self.bn2(self.conv2(out)))
        if self.training and self.drop_path > 0.0:
            keep = 1.0 - self.drop_path
            mask = (rs.rand(out.shape[0]) < keep).astype("float32") / keep
            out = out * torch.from_numpy(mask).view(-1, 1, 1, 1)
        return F.relu(out + shortcut)


class TinyResNet(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, widths=(8, 16), drop_path_rate=0.2):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        dpr = [float(v) for v in np.linspace(0, drop_path_rate, 3)]
        self.layer1 = BasicBlock(widths[0], widths[0], drop_path=dpr[0])
        self.layer2 = BasicBlock(widths[0], widths[1], stride=2, drop_path=dpr[1])
        self.layer3 = BasicBlock(widths[1], widths[1], drop_path=dpr[2])
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
                                  nn.Linear(widths[1], num_classes))

    def forward(self, x):
        return self.head(self.layer3(self.layer2(self.layer1(self.stem(x)))))


def one_hot_smooth(target, num_classes, smoothing):
    off = smoothing / num_classes
    on = 1.0 - smoothing + off
    return torch.full((target.size(0), num_classes), off).scatter_(1, target.unsqueeze(1), on)


class SoftTargetCrossEntropy(nn.Module):
    def forward(self, x, target):
        return torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1).mean()


def mixup_cutmix(x, y, alpha=0.8, cutmix_alpha=1.0, smoothing=0.1):
    lam = float(rs.beta(alpha, alpha)) if rs.rand() < 0.5 else None
    x = x.clone()
    if lam is None:  # cutmix: paste a box from the flipped batch
        lam = float(rs.beta(cutmix_alpha, cutmix_alpha))
        h, w = x.shape[-2:]
        cut = math.sqrt(1.0 - lam)
        ch, cw = int(h * cut), int(w * cut)
        cy, cx = rs.randint(0, h), rs.randint(0, w)
        y0, y1 = np.clip(cy - ch // 2, 0, h), np.clip(cy + ch // 2, 0, h)
        x0, x1 = np.clip(cx - cw // 2, 0, w), np.clip(cx + cw // 2, 0, w)
        x[:, :, y0:y1, x0:x1] = x.flip(0)[:, :, y0:y1, x0:x1]
        lam = 1.0 - float((y1 - y0) * (x1 - x0)) / (h * w)
        kind = "cutmix"
    else:
        x.mul_(lam).add_(x.flip(0).mul_(1.0 - lam))
        kind = "mixup"
    y1h = one_hot_smooth(y, NUM_CLASSES, smoothing)
    return x, y1h * lam + y1h.flip(0) * (1.0 - lam), kind, lam


def param_groups_weight_decay(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    return [{"params": no_decay, "weight_decay": 0.0},
            {"params": decay, "weight_decay": weight_decay}]


class ModelEmaV3(nn.Module):
    def __init__(self, model, decay=0.99, min_decay=0.0, use_warmup=True, warmup_power=0.75):
        super().__init__()
        self.module = copy.deepcopy(model).eval()
        self.decay, self.min_decay = decay, min_decay
        self.use_warmup, self.warmup_power = use_warmup, warmup_power

    def get_decay(self, step):
        if not self.use_warmup:
            return self.decay
        decay = 1.0 - (1.0 + step) ** -self.warmup_power
        return max(min(decay, self.decay), self.min_decay)

    @torch.no_grad()
    def update(self, model, step):
        decay = self.get_decay(step)
        ema_params = tuple(self.module.parameters())
        model_params = tuple(model.parameters())
        torch._foreach_lerp_(ema_params, model_params, weight=1.0 - decay)
        ema_bufs = [b for b in self.module.buffers() if b.is_floating_point()]
        model_bufs = [b for b in model.buffers() if b.is_floating_point()]
        torch._foreach_mul_(ema_bufs, decay)
        torch._foreach_add_(ema_bufs, model_bufs, alpha=1.0 - decay)
        return decay


@torch.jit.script
def topk_correct(logits: torch.Tensor, target: torch.Tensor, k: int) -> torch.Tensor:
    _, pred = logits.topk(k, 1, True, True)
    correct = pred.t().eq(target.reshape(1, -1).expand_as(pred.t()))
    return correct[:k].reshape(-1).float().sum(0)


def accuracy(output, target, topk=(1,)):
    batch = target.size(0)
    return [topk_correct(output, target, k).item() * 100.0 / batch for k in topk]


images = torch.from_numpy(rs.randn(32, 3, 8, 8).astype("float32"))
labels = torch.from_numpy(rs.randint(0, NUM_CLASSES, 32)).long()
model = TinyResNet()
det_init(model, 3, 0.2)
for m in model.modules():
    if isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
ema = ModelEmaV3(model, decay=0.9)
groups = param_groups_weight_decay(model, 5e-4)
print("groups", len(groups[0]["params"]), len(groups[1]["params"]))
opt = torch.optim.SGD(groups, lr=0.1, momentum=0.9, nesterov=True)
warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=1e-3)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[2])
criterion = SoftTargetCrossEntropy()
for step in range(8):
    idx = torch.from_numpy(rs.permutation(32)[:16])
    x, y = images[idx], labels[idx]
    x, soft, kind, lam = mixup_cutmix(x, y)
    model.train()
    loss = criterion(model(x), soft)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
    opt.step()
    sched.step()
    decay = ema.update(model, step)
    print("step", step, kind, "%.4f %.6f %.6f %.6f" % (lam, loss.item(), opt.param_groups[0]["lr"],
                                                       decay))
model.eval()
with torch.no_grad():
    out = model(images)
    top1, top5 = accuracy(out, labels, topk=(1, 5))
    ema_out = ema.module(images)
    e1, e5 = accuracy(ema_out, labels, topk=(1, 5))
    plain_ce = F.cross_entropy(out, labels, label_smoothing=0.1)
    by_hand = criterion(out, one_hot_smooth(labels, NUM_CLASSES, 0.1))
print("acc %.4f %.4f ema %.4f %.4f" % (top1, top5, e1, e5))
print("ce %.6f %.6f" % (plain_ce.item(), by_hand.item()))
print("logits %.6f %.6f" % (out.sum().item(), ema_out.abs().sum().item()))
print("bn", "%.6f %.6f" % (model.layer2.bn1.running_mean.sum().item(),
                           ema.module.layer2.bn1.running_var.sum().item()))
print("tracked", int(model.stem[1].num_batches_tracked), int(ema.module.stem[1].num_batches_tracked))
print("se gate", "%.6f" % model.layer3.se.fc2.bias.abs().sum().item())
