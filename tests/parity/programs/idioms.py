"""A PyTorch program using everyday idioms: packed LSTM, REINFORCE with Categorical,
message passing with index_add_, Normal KL, DataLoader, state_dict round trip."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.distributions import Categorical, Normal
from torch.utils.data import TensorDataset, DataLoader
from common_init import det_init

rs = np.random.RandomState(0)
# 1. LSTM classifier on packed variable-length sequences
class Cls(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(24, 3)
    def forward(self, x, lengths):
        e = self.emb(x)
        packed = pack_padded_sequence(e, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, lens = pad_packed_sequence(out, batch_first=True)
        h = torch.cat([h[-2], h[-1]], dim=1)
        return self.fc(h), out.sum()
m = Cls(); det_init(m)
seqs = [torch.from_numpy(rs.randint(1, 20, size=(n,))) for n in (5, 3, 7, 2)]
x = pad_sequence(seqs, batch_first=True)
lengths = torch.tensor([5, 3, 7, 2])
y = torch.tensor([0, 2, 1, 1])
opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
for step in range(3):
    opt.zero_grad()
    logits, s = m(x, lengths)
    loss = F.cross_entropy(logits, y, label_smoothing=0.1)
    loss.backward(); opt.step()
    print("lstm", step, "%.6f %.5f" % (loss.item(), s.item()))

# 2. REINFORCE with Categorical
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.0), nn.Linear(16, 2))
det_init(policy, 1)
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
states = torch.from_numpy(rs.randn(10, 4).astype("float32"))
actions = torch.from_numpy(rs.randint(0, 2, size=(10,)))
rewards = list(rs.rand(10))
R, returns = 0, []
for r in rewards[::-1]:
    R = r + 0.99 * R
    returns.insert(0, R)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + np.finfo(np.float32).eps.item())
probs = F.softmax(policy(states), dim=1)
m_ = Categorical(probs)
loss = (-m_.log_prob(actions) * returns).sum() - 0.01 * m_.entropy().mean()
opt.zero_grad(); loss.backward(); opt.step()
print("reinforce %.6f" % loss.item(), str(returns.dtype).split(".")[1])

# 3. Message passing with index_add_ / scatter
N, E_ = 6, 12
src = torch.from_numpy(rs.randint(0, N, size=(E_,)))
dst = torch.from_numpy(rs.randint(0, N, size=(E_,)))
h = torch.from_numpy(rs.randn(N, 5).astype("float32")).requires_grad_()
lin = nn.Linear(5, 5); det_init(lin, 2)
msg = lin(h)[src]
agg = torch.zeros(N, 5).index_add_(0, dst, msg)
deg = torch.zeros(N).scatter_add_(0, dst, torch.ones(E_))
out = agg / deg.clamp(min=1).unsqueeze(-1)
out.pow(2).sum().backward()
print("gnn %.6f %.6f" % (out.sum().item(), h.grad.abs().sum().item()))

# 4. VAE-ish with Normal rsample replaced by fixed eps, KL
mu = torch.from_numpy(rs.randn(3, 4).astype("float32")).requires_grad_()
logvar = torch.from_numpy(rs.randn(3, 4).astype("float32")).requires_grad_()
q = Normal(mu, (0.5 * logvar).exp())
p = Normal(torch.zeros_like(mu), torch.ones_like(mu))
kl = torch.distributions.kl_divergence(q, p).sum()
kl.backward()
print("kl %.6f %.6f" % (kl.item(), mu.grad.sum().item()))

# 5. DataLoader + TensorDataset + model.eval + state_dict roundtrip
ds = TensorDataset(torch.arange(10.).view(5, 2), torch.arange(5))
dl = DataLoader(ds, batch_size=2, shuffle=False, drop_last=False)
print("dl", [b[1].tolist() for b in dl])
sd = m.state_dict()
m2 = Cls(); m2.load_state_dict(sd); m2.eval()
with torch.no_grad():
    print("eval %.5f" % m2(x, lengths)[0].sum().item())
print(sorted(sd.keys())[:4], len(sd))
