"""Two graph networks and a metric-learning net: Kipf & Welling's GCN on a dense
symmetric-normalised adjacency (D^-1/2 (A+I) D^-1/2), a GCN layer by index_add_ message
passing with degree normalisation (PyG style), and a siamese embedding net trained with
TripletMarginLoss, pairwise_distance, cosine_similarity and CosineEmbeddingLoss."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

rs = np.random.RandomState(0)
N, Fin, C = 12, 6, 3
edges = set()
while len(edges) < 20:
    a, b = rs.randint(0, N, 2)
    if a != b:
        edges.add((min(a, b), max(a, b)))
edge_index = torch.tensor(sorted(edges)).t()
edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)  # undirected
x = torch.from_numpy(rs.randn(N, Fin).astype("float32"))
y = torch.from_numpy(rs.randint(0, C, N))
train_mask = torch.zeros(N, dtype=torch.bool)
train_mask[:8] = True

# 1. dense GCN
A = torch.zeros(N, N)
A[edge_index[0], edge_index[1]] = 1.0
A_hat = A + torch.eye(N)
d_inv_sqrt = A_hat.sum(1).pow(-0.5)
d_inv_sqrt[torch.isinf(d_inv_sqrt)] = 0.0
A_norm = d_inv_sqrt.unsqueeze(1) * A_hat * d_inv_sqrt.unsqueeze(0)
class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(Fin, 16))
        self.w2 = nn.Parameter(torch.empty(16, C))
        self.b1 = nn.Parameter(torch.zeros(16))
    def forward(self, x, adj):
        h = F.relu(torch.mm(adj, x @ self.w1) + self.b1)  # torch.sparse.mm: not in ember
        h = F.dropout(h, 0.5, training=False)
        return F.log_softmax(torch.mm(adj, h.matmul(self.w2)), dim=1)
gcn = GCN(); det_init(gcn, 1, 0.3)
opt = torch.optim.Adam(gcn.parameters(), lr=0.05, weight_decay=5e-4)
for epoch in range(5):
    opt.zero_grad()
    out = gcn(x, A_norm)
    loss = F.nll_loss(out[train_mask], y[train_mask])
    loss.backward(); opt.step()
    acc = (out.argmax(1)[~train_mask] == y[~train_mask]).float().mean()
    print("gcn", epoch, "%.6f %.4f" % (loss.item(), acc.item()))

# 2. message passing GCNConv: add self loops, deg^-1/2 on both ends, index_add_
class GCNConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))
    def forward(self, x, edge_index):
        loops = torch.arange(x.size(0)).unsqueeze(0).repeat(2, 1)
        ei = torch.cat([edge_index, loops], dim=1)
        row, col = ei
        deg = torch.zeros(x.size(0), dtype=x.dtype).scatter_add_(0, col, torch.ones(col.numel()))
        norm = deg.rsqrt()[row] * deg.rsqrt()[col]
        h = self.lin(x)
        out = torch.zeros_like(h).index_add_(0, col, h.index_select(0, row) * norm.view(-1, 1))
        return out + self.bias
conv1, conv2 = GCNConv(Fin, 16), GCNConv(16, C)
det_init(conv1, 1, 0.3); det_init(conv2, 2, 0.3)
params = list(conv1.parameters()) + list(conv2.parameters())
opt = torch.optim.SGD(params, lr=0.2, momentum=0.5)
for epoch in range(5):
    opt.zero_grad()
    out = conv2(F.elu(conv1(x, edge_index)), edge_index)
    loss = F.cross_entropy(out[train_mask], y[train_mask])
    loss.backward(); opt.step()
    print("mp", epoch, "%.6f %.6f" % (loss.item(), conv1.lin.weight.grad.abs().sum().item()))
# both give the same propagation
h = torch.from_numpy(rs.randn(N, 4).astype("float32"))
c = GCNConv(4, 4); c.lin.weight.data = torch.eye(4)
print("same %.6f" % (c(h, edge_index) - A_norm @ h).abs().max().item(), (c(h, edge_index) - A_norm @ h).abs().max().item() < 1e-5)

# 3. triplet / siamese network
class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.convnet = nn.Sequential(nn.Conv2d(1, 4, 3), nn.PReLU(), nn.MaxPool2d(2, stride=2),
                                     nn.Conv2d(4, 8, 3), nn.PReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc = nn.Sequential(nn.Linear(32, 16), nn.PReLU(), nn.Linear(16, 4))
    def forward(self, x):
        return F.normalize(self.fc(self.convnet(x).flatten(1)), p=2, dim=1)
net = EmbeddingNet(); det_init(net, 5, 0.8)
criterion = nn.TripletMarginLoss(margin=1.0, p=2, swap=True)
opt = torch.optim.RMSprop(net.parameters(), lr=1e-3, alpha=0.9, centered=True)
imgs = torch.from_numpy(rs.randn(3, 5, 1, 12, 12).astype("float32"))
for step in range(4):
    opt.zero_grad()
    a, p, n = net(imgs[0]), net(imgs[1]), net(imgs[2])
    loss = criterion(a, p, n)
    loss.backward(); opt.step()
    print("triplet", step, "%.6f" % loss.item())
with torch.no_grad():
    a, p, n = net(imgs[0]), net(imgs[1]), net(imgs[2])
    print("dist", ["%.5f" % v for v in F.pairwise_distance(a, p).tolist()])
    print("cos", ["%.5f" % v for v in F.cosine_similarity(a, n, dim=1).tolist()])
    print("cdist %.6f" % torch.cdist(a, n).sum().item())
    tgt = torch.tensor([1, -1, 1, -1, 1])
    print("cel %.6f" % nn.CosineEmbeddingLoss(margin=0.2)(a, n, tgt).item())
    tml = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), margin=0.5)
    print("tmwd %.6f" % tml(a, p, n).item())
    print("mrl %.6f" % F.margin_ranking_loss(a[:, 0], n[:, 0], tgt.float(), margin=0.1).item())
