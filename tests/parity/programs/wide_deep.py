"""A wide-and-deep click-through model on synthetic tabular data: numeric columns
standardized with statistics from the training split, bucketized with torch.quantile
boundaries and torch.bucketize into wide crosses, categorical embeddings (one with
max_norm) concatenated with the numeric features into an MLP with BatchNorm1d and Dropout,
a wide part as an EmbeddingBag(mode='sum') over hashed cross features with per-sample
weights, BCEWithLogitsLoss(pos_weight), a DataLoader over a TensorDataset whose sampler is a
list of NumPy-drawn indices (what WeightedRandomSampler would draw), Adam with
ReduceLROnPlateau on the validation AUC (computed by sorting), early stopping with a
deep-copied best state_dict, and a checkpoint dict with NumPy scalars and Python objects
saved by torch.save and loaded back with weights_only=False into a model with an extra head
through load_state_dict(strict=False); then NaN imputation (nanmean, where, nan_to_num), a
dict-returning Dataset with default_collate, a ModuleDict of sparse embeddings under
SparseAdam beside SGD(nesterov) with CyclicLR, an exact resume from a saved checkpoint,
parameters_to_vector, and a count head fed integer targets by mse_loss / smooth_l1_loss."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import copy
import os
import tempfile
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler
from common_init import det_init

rs = np.random.RandomState(0)
N, N_NUM, CARDS = 600, 4, (7, 5, 11)
num = rs.randn(N, N_NUM).astype(np.float32) * np.array([1.0, 3.0, 0.5, 10.0], np.float32)
cat = np.stack([rs.randint(0, c, N) for c in CARDS], axis=1).astype(np.int64)
logit = (0.8 * num[:, 0] - 0.3 * num[:, 1] + 0.05 * num[:, 3] + (cat[:, 0] % 3 == 0) * 1.2
         - (cat[:, 2] > 6) * 0.9 - 1.5)
label = (rs.rand(N) < 1 / (1 + np.exp(-logit))).astype(np.float32)
print("positives", int(label.sum()), "of", N)

X_num, X_cat, y = torch.from_numpy(num), torch.from_numpy(cat), torch.from_numpy(label)
train_idx, val_idx = torch.arange(0, 450), torch.arange(450, N)
mean = X_num[train_idx].mean(dim=0)
std = X_num[train_idx].std(dim=0, unbiased=True)
X_num = (X_num - mean) / std
boundaries = torch.quantile(X_num[train_idx], torch.tensor([0.25, 0.5, 0.75]), dim=0)
buckets = torch.stack([torch.bucketize(X_num[:, j].contiguous(), boundaries[:, j].contiguous())
                       for j in range(N_NUM)], dim=1)
print("boundaries", " ".join("%.5f" % v for v in boundaries.flatten().tolist()))
print("bucket counts", torch.bincount(buckets[:, 0], minlength=4).tolist())

HASH = 97
cross = torch.stack([X_cat[:, 0] * 5 + X_cat[:, 1],
                     X_cat[:, 2] * 4 + buckets[:, 0],
                     buckets[:, 1] * 4 + buckets[:, 3]], dim=1)
wide_ids = (cross * torch.tensor([31, 17, 13]) + torch.tensor([0, 7, 3])) % HASH


class WideAndDeep(nn.Module):
    def __init__(self, cards, n_num, emb_dim=4, hidden=(32, 16), dropout=0.3):
        super().__init__()
        self.embeddings = nn.ModuleList(
            [nn.Embedding(c, emb_dim, max_norm=1.0 if i == 0 else None)
             for i, c in enumerate(cards)])
        layers, width = [], emb_dim * len(cards) + n_num
        for h in hidden:
            layers += [nn.Linear(width, h, bias=False), nn.BatchNorm1d(h), nn.ReLU(),
                       nn.Dropout(dropout)]
            width = h
        self.deep = nn.Sequential(*layers, nn.Linear(width, 1))
        self.wide = nn.EmbeddingBag(HASH, 1, mode="sum")
        self.wide_bias = nn.Parameter(torch.zeros(1))

    def forward(self, x_num, x_cat, wide_ids, wide_w):
        embs = [emb(x_cat[:, i]) for i, emb in enumerate(self.embeddings)]
        deep = self.deep(torch.cat(embs + [x_num], dim=1))
        wide = self.wide(wide_ids, per_sample_weights=wide_w) + self.wide_bias
        return (deep + wide).squeeze(-1)


def roc_auc(scores, targets):
    order = torch.argsort(scores, descending=True, stable=True)
    t = targets[order]
    tps = torch.cumsum(t, 0)
    fps = torch.cumsum(1 - t, 0)
    tpr = torch.cat([torch.zeros(1), tps / tps[-1]])
    fpr = torch.cat([torch.zeros(1), fps / fps[-1]])
    return torch.trapz(tpr, fpr).item()


wide_w = torch.ones_like(wide_ids, dtype=torch.float32)
wide_w[:, 2] = 0.5
dataset = TensorDataset(X_num, X_cat, wide_ids, wide_w, y)
train_set = torch.utils.data.Subset(dataset, train_idx.tolist())
class_counts = torch.bincount(y[train_idx].long())
sample_weights = (1.0 / class_counts.float())[y[train_idx].long()]
sampler = WeightedRandomSampler(sample_weights, num_samples=len(train_set), replacement=True)
print("sampler", len(sampler), "%.6f" % sampler.weights.sum().item(),
      sampler.weights.dtype == torch.float64)
pos_weight = (class_counts[0] / class_counts[1]).reshape(1)
print("pos_weight %.5f" % pos_weight.item())

model = WideAndDeep(CARDS, N_NUM)
det_init(model, 0, 0.3)
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-5)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5,
                                                       patience=1, threshold=1e-3)
val_tensors = dataset[val_idx]
best_auc, best_state, bad_epochs, history = -1.0, None, 0, []
for epoch in range(8):
    p = sample_weights.numpy() / sample_weights.numpy().sum()
    indices = rs.choice(len(train_set), size=len(train_set), replace=True, p=p).tolist()
    loader = DataLoader(train_set, batch_size=64, sampler=indices, drop_last=True)
    model.train()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.eval()  # deterministic fine-tuning: keep BatchNorm training, no dropout
    running = 0.0
    for xb_num, xb_cat, xb_wide, xb_w, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb_num, xb_cat, xb_wide, xb_w), yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * yb.size(0)
    model.eval()
    with torch.no_grad():
        val_logits = model(*val_tensors[:4])
        val_loss = criterion(val_logits, val_tensors[4]).item()
        auc = roc_auc(torch.sigmoid(val_logits), val_tensors[4])
    scheduler.step(auc)
    history.append({"epoch": epoch, "auc": auc, "lr": optimizer.param_groups[0]["lr"]})
    print("epoch", epoch, "train %.5f val %.5f auc %.5f lr %.5f" % (
        running / len(loader.sampler), val_loss, auc, optimizer.param_groups[0]["lr"]),
        "batches", len(loader))
    if auc > best_auc + 1e-4:
        best_auc, bad_epochs = auc, 0
        best_state = copy.deepcopy(model.state_dict())
        best_epoch = epoch
    else:
        bad_epochs += 1
        if bad_epochs >= 3:
            print("early stop at", epoch)
            break

emb0 = model.embeddings[0].weight.detach()
print("emb0 norms max %.5f" % emb0.norm(dim=1).max().item())
ckpt_dir = tempfile.mkdtemp()
path = os.path.join(ckpt_dir, "best.pt")
torch.save({"epoch": np.int64(best_epoch), "best_auc": np.float64(best_auc),
            "model_state_dict": best_state, "optimizer_state_dict": optimizer.state_dict(),
            "config": {"cards": CARDS, "hidden": [32, 16], "name": "wide&deep",
                       "numeric_columns": {"age", "income", "visits", "tenure"}},
            "history": history, "boundaries": boundaries}, path)
ckpt = torch.load(path, weights_only=False)
print("checkpoint epoch", int(ckpt["epoch"]), "auc %.5f" % float(ckpt["best_auc"]),
      "config", ckpt["config"]["cards"], ckpt["config"]["name"], len(ckpt["history"]),
      type(ckpt["epoch"]).__name__, type(ckpt["best_auc"]).__name__,
      sorted(ckpt["config"]["numeric_columns"]), ckpt["epoch"] + 1)
print("optimizer state", sorted(ckpt["optimizer_state_dict"]["param_groups"][0].keys())[:6],
      len(ckpt["optimizer_state_dict"]["state"]))


class WideAndDeepWithCalibration(WideAndDeep):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calibration = nn.Linear(1, 1)

    def forward(self, *inputs):
        return self.calibration(super().forward(*inputs).unsqueeze(-1)).squeeze(-1)


restored = WideAndDeepWithCalibration(CARDS, N_NUM)
with torch.no_grad():
    restored.calibration.weight.fill_(1.0)
    restored.calibration.bias.zero_()
result = restored.load_state_dict(ckpt["model_state_dict"], strict=False)
print("missing", sorted(result.missing_keys), "unexpected", result.unexpected_keys)
restored.eval()
model.load_state_dict(best_state)
model.eval()
with torch.no_grad():
    a = model(*val_tensors[:4])
    b = restored(*val_tensors[:4])
print("restored auc %.5f same %s" % (roc_auc(torch.sigmoid(b), val_tensors[4]),
                                     torch.allclose(a, b)))
print("bn running_var %.5f num_batches %d" % (
    restored.deep[1].running_var.sum().item(), restored.deep[1].num_batches_tracked.item()))

# ---- missing values, a dict-returning Dataset, sparse embeddings, resuming training ----
raw = X_num.clone()
missing = torch.from_numpy(rs.rand(N, N_NUM) < 0.1)
raw[missing] = float("nan")
col_means = torch.nanmean(raw[train_idx], dim=0)
imputed = torch.where(torch.isnan(raw), col_means.expand_as(raw), raw)
print("nan count", int(torch.isnan(raw).sum()), "means", " ".join(
    "%.5f" % v for v in col_means.tolist()), "nan_to_num %.5f" % torch.nan_to_num(
    raw, nan=0.0).sum().item(), "median %.5f" % raw[:, 0].nanmedian().item())


class TabularDataset(torch.utils.data.Dataset):
    def __init__(self, numeric, categorical, target, indices):
        self.numeric, self.categorical, self.target = numeric, categorical, target
        self.indices = indices

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, i):
        j = self.indices[i]
        return {"numeric": self.numeric[j], "cat": {f"c{k}": self.categorical[j, k]
                                                   for k in range(len(CARDS))},
                "label": self.target[j].item(), "row": j}


def collate(batch):
    out = torch.utils.data.default_collate(batch)
    out["label"] = out["label"].float()
    return out


class SparseTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleDict({f"c{k}": nn.Embedding(c, 3, sparse=True)
                                     for k, c in enumerate(CARDS)})
        self.head = nn.Linear(3 * len(CARDS) + N_NUM, 1)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, batch):
        self.calls += 1
        embs = [self.tables[name](ids) for name, ids in sorted(batch["cat"].items())]
        return self.head(torch.cat(embs + [batch["numeric"]], dim=1)).squeeze(1)


def train_tower(tower, opts, sched, loader, epochs):
    for _ in range(epochs):
        for batch in loader:
            for opt in opts:
                opt.zero_grad()
            loss = F.binary_cross_entropy_with_logits(
                tower(batch), batch["label"], weight=1.0 + batch["label"])
            loss.backward()
            for opt in opts:
                opt.step()
            sched.step()
    return loss.item()


tab = TabularDataset(imputed, X_cat, y, list(range(450)))
sample = tab[3]
print("item keys", sorted(sample), sorted(sample["cat"]), type(sample["label"]).__name__)
loader = DataLoader(tab, batch_size=50, shuffle=False, collate_fn=collate)
first = next(iter(loader))
print("batch", tuple(first["numeric"].shape), first["cat"]["c1"].dtype == torch.int64,
      first["row"][:4].tolist(), first["label"].dtype == torch.float32)

tower = SparseTower()
det_init(tower, 5, 0.2)
dense_params = list(tower.head.parameters())
sparse_opt = torch.optim.SparseAdam(list(tower.tables.parameters()), lr=0.02)
dense_opt = torch.optim.SGD(dense_params, lr=0.05, momentum=0.9, nesterov=True)
cyclic = torch.optim.lr_scheduler.CyclicLR(dense_opt, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                           mode="triangular2", cycle_momentum=True)
loss_a = train_tower(tower, [sparse_opt, dense_opt], cyclic, loader, 1)
print("tower loss %.5f lr %.5f momentum %.5f calls %d" % (
    loss_a, dense_opt.param_groups[0]["lr"], dense_opt.param_groups[0]["momentum"],
    tower.calls.item()), "sparse grad", tower.tables["c0"].weight.grad.is_sparse,
    "state keys", sorted(tower.state_dict().keys())[:3])

resume_path = os.path.join(ckpt_dir, "resume.pt")
torch.save({"model": tower.state_dict(), "sparse_opt": sparse_opt.state_dict(),
            "dense_opt": dense_opt.state_dict(), "sched": cyclic.state_dict()}, resume_path)
loss_b = train_tower(tower, [sparse_opt, dense_opt], cyclic, loader, 1)
vec_b = nn.utils.parameters_to_vector(tower.parameters())

resumed = SparseTower()
saved = torch.load(resume_path)
resumed.load_state_dict(saved["model"])
sparse_opt2 = torch.optim.SparseAdam(list(resumed.tables.parameters()), lr=0.02)
dense_opt2 = torch.optim.SGD(list(resumed.head.parameters()), lr=0.05, momentum=0.9,
                             nesterov=True)
cyclic2 = torch.optim.lr_scheduler.CyclicLR(dense_opt2, base_lr=0.01, max_lr=0.1,
                                            step_size_up=3, mode="triangular2")
sparse_opt2.load_state_dict(saved["sparse_opt"])
dense_opt2.load_state_dict(saved["dense_opt"])
cyclic2.load_state_dict(saved["sched"])
loss_c = train_tower(resumed, [sparse_opt2, dense_opt2], cyclic2, loader, 1)
vec_c = nn.utils.parameters_to_vector(resumed.parameters())
print("resume loss %.5f %.5f diff %.3e calls %d" % (loss_b, loss_c, (vec_b - vec_c).abs().max().item(),
                                                    resumed.calls.item()), vec_b.numel())
nn.utils.vector_to_parameters(torch.zeros_like(vec_c), resumed.parameters())
print("zeroed %.5f" % sum(p.abs().sum().item() for p in resumed.parameters()))

# ---- an auxiliary count head trained on integer targets (no .float() on the labels) ----
counts = torch.from_numpy(rs.poisson(2.0, N))  # int64 click counts
count_head = nn.Linear(N_NUM, 1)
det_init(count_head, 8, 0.2)
count_opt = torch.optim.SGD(count_head.parameters(), lr=0.05)
for step in range(4):
    pred = count_head(imputed).squeeze(1)
    loss = F.mse_loss(pred, counts) + 0.5 * F.smooth_l1_loss(pred, counts, beta=0.5)
    count_opt.zero_grad()
    loss.backward()
    count_opt.step()
    print("count step", step, "loss %.6f" % loss.item(), loss.dtype == torch.float32,
          count_head.weight.grad.dtype == torch.float32)
