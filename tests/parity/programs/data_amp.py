"""Input pipelines and mixed precision: a map-style Dataset with a custom collate_fn that
pads variable-length sequences, a NumPy-seeded shuffling Sampler and a bucketing batch
sampler, DataLoader with num_workers=2 (worker_init_fn, get_worker_info, an
IterableDataset split across workers), then a training loop under
torch.autocast('cpu', dtype=torch.bfloat16) with the GradScaler API."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import (Dataset, IterableDataset, DataLoader, Sampler, BatchSampler,
                              Subset, ConcatDataset, get_worker_info)
from torch.nn.utils.rnn import pad_sequence
from common_init import det_init

class SeqDataset(Dataset):
    def __init__(self, n, seed):
        rs = np.random.RandomState(seed)
        self.items = [(rs.randn(rs.randint(2, 7), 3).astype("float32"), int(rs.randint(0, 4)))
                      for _ in range(n)]
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        x, y = self.items[i]
        return torch.from_numpy(x), y

class NumpyShuffle(Sampler):
    def __init__(self, data_source, seed):
        self.n, self.seed, self.epoch = len(data_source), seed, 0
    def __iter__(self):
        rs = np.random.RandomState(self.seed + self.epoch)
        return iter(rs.permutation(self.n).tolist())
    def __len__(self):
        return self.n
    def set_epoch(self, e):
        self.epoch = e

def collate(batch):
    xs, ys = zip(*batch)
    lengths = torch.tensor([len(x) for x in xs])
    return pad_sequence(xs, batch_first=True, padding_value=0.0), lengths, torch.tensor(ys)

def init_fn(worker_id):
    np.random.seed(100 + worker_id)

ds = ConcatDataset([SeqDataset(10, 0), SeqDataset(6, 1)])
sampler = NumpyShuffle(ds, seed=5)
loader = DataLoader(ds, batch_size=4, sampler=sampler, collate_fn=collate, num_workers=2,
                    worker_init_fn=init_fn, drop_last=True, persistent_workers=True,
                    prefetch_factor=2)
print("len", len(ds), len(loader))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 16)
        self.mlp = nn.Sequential(nn.Tanh(), nn.Linear(16, 16), nn.GELU(approximate="tanh"))
        self.out = nn.Linear(16, 4)
    def forward(self, x, lengths):
        h = self.mlp(self.inp(x))
        mask = (torch.arange(x.size(1))[None] < lengths[:, None]).unsqueeze(-1)
        pooled = (h * mask).sum(1) / lengths[:, None]
        return self.out(pooled)

model = Net(); det_init(model, 0, 0.3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=2)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for i, (x, lengths, y) in enumerate(loader):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(x, lengths)
            low = logits.dtype == torch.bfloat16
            loss = F.cross_entropy(logits, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(opt)
        scaler.update()
        print("amp", epoch, i, tuple(x.shape), low, loss.dtype == torch.float32,
              "%.3f %.1f" % (loss.item(), scaler.get_scale()))
w0 = model.out.weight.detach().clone()
opt.zero_grad()
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = F.cross_entropy(model(x, lengths), y) * float("inf")  # an overflow: step skipped
scaler.scale(loss).backward()
scaler.step(opt); scaler.update()
print("skip", torch.equal(w0, model.out.weight), "%.1f" % scaler.get_scale(),
      sorted(scaler.state_dict().items())[:3])
with torch.no_grad():
    x, lengths, y = collate([ds[i] for i in range(5)])
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
        print("fp32 %.5f" % model(x, lengths).sum().item())
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        mm = torch.mm(x[0], x[0].t())
        print("bf16", mm.dtype == torch.bfloat16, "%.2f" % mm.float().sum().item(),
              torch.is_autocast_enabled("cpu"))

class Shards(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end
    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(np.ceil((self.end - self.start) / info.num_workers))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))
print("iter0", sorted(int(v) for v in DataLoader(Shards(3, 13), num_workers=0)))
print("iter2", sorted(int(v) for v in DataLoader(Shards(3, 13), num_workers=2)))
bs = BatchSampler(NumpyShuffle(range(7), seed=3), batch_size=3, drop_last=False)
print("batches", list(bs))
sub = Subset(ds, [1, 3, 15])
dl = DataLoader(sub, batch_size=None, num_workers=2)
print("subset", [(tuple(x.shape), int(y)) for x, y in dl])
