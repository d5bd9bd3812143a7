"""Three models on sparse tensors: skip-gram word2vec with negative sampling
(nn.Embedding(sparse=True) + SparseAdam), a GCN whose normalised adjacency is a sparse COO
tensor (torch.sparse.mm, coalesce, sparse sums for the degrees), and a DLRM-style
recommender (EmbeddingBag(sparse=True) with per-sample weights, SGD with momentum on
sparse and dense parameters, Adagrad on a second table)."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import warnings
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

warnings.filterwarnings("ignore", message="Sparse invariant checks")
rs = np.random.RandomState(0)

# 1. skip-gram with negative sampling
V, D = 40, 8
corpus = rs.randint(0, V, 300)
centers = torch.from_numpy(corpus[2:-2])
contexts = torch.from_numpy(np.stack([corpus[:-4], corpus[1:-3], corpus[3:-1], corpus[4:]], 1))
negatives = torch.from_numpy(rs.randint(0, V, (len(centers), 5)))


class SkipGram(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Embedding(V, D, sparse=True)
        self.out = nn.Embedding(V, D, sparse=True)

    def forward(self, c, ctx, neg):
        v = self.inp(c).unsqueeze(1)                                  # B, 1, D
        pos = (v * self.out(ctx)).sum(-1)                              # B, 4
        negs = (v * self.out(neg)).sum(-1)                             # B, 5
        return -(F.logsigmoid(pos).sum(1) + F.logsigmoid(-negs).sum(1)).mean()


sg = SkipGram()
det_init(sg, seed=1, scale=0.3)
opt = torch.optim.SparseAdam(sg.parameters(), lr=0.05)
for epoch in range(4):
    for i in range(0, len(centers), 64):
        opt.zero_grad()
        loss = sg(centers[i:i + 64], contexts[i:i + 64], negatives[i:i + 64])
        loss.backward()
        opt.step()
    g = sg.inp.weight.grad
    print(f"skipgram epoch {epoch} loss {loss.item():.5f} grad nnz {g._nnz()} "
          f"rows {g.coalesce()._nnz()} layout {str(g.layout).split('.')[-1]}")
emb = F.normalize(sg.inp.weight.detach(), dim=1)
print("nearest to 3:", (emb @ emb[3]).topk(3).indices.tolist())

# 2. GCN on a sparse adjacency
N, Fin, C = 15, 5, 3
src = torch.from_numpy(rs.randint(0, N, 40))
dst = torch.from_numpy(rs.randint(0, N, 40))
keep = src != dst
src, dst = src[keep], dst[keep]
idx = torch.cat([torch.stack([src, dst]), torch.stack([dst, src]),
                 torch.arange(N).repeat(2, 1)], 1)
adj = torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1]), (N, N)).coalesce()
adj = torch.sparse_coo_tensor(adj.indices(), torch.ones(adj._nnz()), (N, N)).coalesce()
deg = torch.sparse.sum(adj, 1).to_dense()
dinv = deg.pow(-0.5)
r, c = adj.indices()
norm_adj = torch.sparse_coo_tensor(adj.indices(), dinv[r] * adj.values() * dinv[c], (N, N))
print("adjacency nnz", norm_adj._nnz(), "degree sum", deg.sum().item())
x = torch.from_numpy(rs.randn(N, Fin).astype("float32"))
y = torch.from_numpy(rs.randint(0, C, N))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(Fin, 16)
        self.l2 = nn.Linear(16, C)

    def forward(self, a, h):
        h = F.relu(torch.sparse.mm(a, self.l1(h)))
        return torch.sparse.mm(a, self.l2(F.dropout(h, 0.0, self.training)))


gcn = GCN()
det_init(gcn, seed=2, scale=0.4)
opt = torch.optim.Adam(gcn.parameters(), lr=0.02, weight_decay=5e-4)
for step in range(25):
    opt.zero_grad()
    out = gcn(norm_adj, x)
    loss = F.cross_entropy(out, y)
    loss.backward()
    opt.step()
    if step % 6 == 0:
        acc = (out.argmax(1) == y).float().mean().item()
        print(f"gcn step {step} loss {loss.item():.5f} acc {acc:.4f}")
print("gcn agg via mm", (norm_adj @ x).sum().item(), torch.mm(norm_adj, x).abs().sum().item())

# 3. DLRM-style recommender
U, I_, B = 30, 25, 16


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.EmbeddingBag(U, 6, mode="sum", sparse=True)
        self.items = nn.EmbeddingBag(I_, 6, mode="mean", sparse=True)
        self.mlp = nn.Sequential(nn.Linear(13, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, u, u_off, u_w, it, it_off, dense):
        a = self.users(u, u_off, per_sample_weights=u_w)
        b = self.items(it, it_off)
        inter = (a * b).sum(1, keepdim=True)
        return self.mlp(torch.cat([a, b, inter], 1)).squeeze(1)


rec = Recommender()
det_init(rec, seed=3, scale=0.3)
sparse_params = [rec.users.weight]
opt_sgd = torch.optim.SGD([rec.users.weight] + list(rec.mlp.parameters()), lr=0.05,
                          momentum=0.9)
opt_ada = torch.optim.Adagrad([rec.items.weight], lr=0.1)
for step in range(20):
    lens = rs.randint(1, 4, B)
    u = torch.from_numpy(rs.randint(0, U, lens.sum()))
    u_off = torch.from_numpy(np.concatenate([[0], np.cumsum(lens)[:-1]]))
    u_w = torch.from_numpy(rs.rand(lens.sum()).astype("float32"))
    it = torch.from_numpy(rs.randint(0, I_, 2 * B))
    it_off = torch.arange(0, 2 * B, 2)
    target = torch.from_numpy(rs.rand(B).astype("float32"))
    opt_sgd.zero_grad()
    opt_ada.zero_grad()
    pred = rec(u, u_off, u_w, it, it_off, None)
    loss = F.binary_cross_entropy_with_logits(pred, target)
    loss.backward()
    opt_sgd.step()
    opt_ada.step()
    if step % 5 == 0:
        print(f"rec step {step} loss {loss.item():.5f} user grad rows "
              f"{rec.users.weight.grad.coalesce()._nnz()} item grad nnz "
              f"{rec.items.weight.grad._nnz()}")
print("final user table", rec.users.weight.abs().sum().item(), "item table",
      rec.items.weight.abs().sum().item())
try:
    torch.optim.Adam([rec.items.weight]).step()
except RuntimeError as e:
    print("Adam:", e)
