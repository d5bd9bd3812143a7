"""Geometric deep learning without PyG: a two-layer graph attention network written by hand
(edge_index tensor, index_select on source/target nodes, leaky_relu attention logits, a
segment softmax by scatter_reduce('amax') and index_add_, multi-head concat then mean,
attention dropout that is a no-op in eval) trained by Adam under MultiStepLR; then a
PointNet++-ish set classifier: k-nearest neighbours by torch.cdist and
topk(largest=False), edge features gathered by advanced indexing (DGCNN's EdgeConv),
max pooling over neighbours and over points, Conv1d shared MLPs with BatchNorm1d."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

rs = np.random.RandomState(0)


def segment_softmax(scores, index, num_nodes):
    """Softmax of scores [E, H] over the edges that share a target node."""
    heads = scores.shape[1]
    seg_max = torch.full((num_nodes, heads), float("-inf"), dtype=scores.dtype)
    seg_max = seg_max.scatter_reduce(0, index.unsqueeze(1).expand_as(scores), scores,
                                     reduce="amax", include_self=True)
    exp = (scores - seg_max.index_select(0, index)).exp()
    denom = torch.zeros(num_nodes, heads, dtype=scores.dtype).index_add_(0, index, exp)
    return exp / (denom.index_select(0, index) + 1e-16)


class GATLayer(nn.Module):
    def __init__(self, cin, cout, heads, concat=True, dropout=0.6, negative_slope=0.2):
        super().__init__()
        self.heads, self.cout, self.concat = heads, cout, concat
        self.lin = nn.Linear(cin, heads * cout, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, cout))
        self.att_dst = nn.Parameter(torch.empty(1, heads, cout))
        self.bias = nn.Parameter(torch.empty(heads * cout if concat else cout))
        self.dropout, self.negative_slope = dropout, negative_slope

    def forward(self, x, edge_index):
        n = x.size(0)
        loops = torch.arange(n, device=x.device)
        edge_index = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
        src, dst = edge_index[0], edge_index[1]
        h = self.lin(x).view(-1, self.heads, self.cout)
        alpha_src = (h * self.att_src).sum(-1)
        alpha_dst = (h * self.att_dst).sum(dim=-1)
        logits = F.leaky_relu(alpha_src.index_select(0, src) + alpha_dst[dst],
                              self.negative_slope)
        alpha = segment_softmax(logits, dst, n)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        messages = h.index_select(0, src) * alpha.unsqueeze(-1)
        out = torch.zeros_like(h).index_add_(0, dst, messages)
        out = out.reshape(n, -1) if self.concat else out.mean(dim=1)
        return out + self.bias, alpha


class GAT(nn.Module):
    def __init__(self, cin, hidden, classes, heads=4):
        super().__init__()
        self.conv1 = GATLayer(cin, hidden, heads)
        self.conv2 = GATLayer(hidden * heads, classes, heads=2, concat=False)

    def forward(self, x, edge_index):
        h, _ = self.conv1(F.dropout(x, 0.6, self.training), edge_index)
        h = F.elu(h)
        return self.conv2(h, edge_index)


N, FIN, C = 16, 5, 3
pairs = {(int(a), int(b)) for a, b in rs.randint(0, N, (40, 2)) if a != b}
edge_index = torch.tensor(sorted(pairs), dtype=torch.long).t().contiguous()
x = torch.from_numpy(rs.randn(N, FIN).astype("float32"))
y = torch.from_numpy(rs.randint(0, C, N)).long()
train_mask = torch.from_numpy(rs.rand(N) < 0.6)
gat = GAT(FIN, 4, C)
det_init(gat, 5, 0.3)
opt = torch.optim.Adam(gat.parameters(), lr=0.01, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[3, 5], gamma=0.5)
gat.eval()  # attention dropout is a no-op in eval, so training runs deterministically
for epoch in range(7):
    out, alpha = gat(x, edge_index)
    loss = F.cross_entropy(out[train_mask], y[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    pred = out.argmax(dim=-1)
    acc = (pred[~train_mask] == y[~train_mask]).sum().item() / int((~train_mask).sum())
    print("gat %d %.6f %.4f lr %.5f" % (epoch, loss.item(), acc, sched.get_last_lr()[0]))
full_ei = torch.cat([edge_index, torch.arange(N).repeat(2, 1)], dim=1)
alpha_sum = torch.zeros(N, 2).index_add_(0, full_ei[1], alpha.detach())
print("alpha sums to one", torch.allclose(alpha_sum, torch.ones(N, 2), atol=1e-5),
      "%.6f" % alpha.max().item())
print("last milestones", dict(sched.milestones), sched.last_epoch)


def knn(points, k):
    """Indices [B, N, k] of each point's k nearest neighbours (itself included)."""
    dist = torch.cdist(points, points)
    return dist.topk(k, dim=-1, largest=False).indices


class EdgeConv(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.k = k
        self.mlp = nn.Sequential(nn.Conv2d(2 * cin, cout, 1, bias=False), nn.BatchNorm2d(cout),
                                 nn.LeakyReLU(0.2))

    def forward(self, feats, coords):
        b, n, c = feats.shape
        idx = knn(coords, self.k)
        batch = torch.arange(b).view(-1, 1, 1)
        neighbours = feats[batch, idx]                               # [B, N, k, C]
        center = feats.unsqueeze(2).expand(-1, -1, self.k, -1)
        edge = torch.cat([neighbours - center, center], dim=-1).permute(0, 3, 1, 2)
        return self.mlp(edge).max(dim=-1)[0].transpose(1, 2)         # [B, N, cout]


class PointNetSet(nn.Module):
    def __init__(self, classes=3, k=4):
        super().__init__()
        self.edge = EdgeConv(3, 16, k)
        self.shared = nn.Sequential(nn.Conv1d(16, 32, 1), nn.BatchNorm1d(32), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Dropout(0.5),
                                  nn.Linear(16, classes))

    def forward(self, pts):
        f = self.edge(pts, pts)
        f = self.shared(f.transpose(1, 2))
        global_feat = torch.max(f, 2, keepdim=True)[0].squeeze(-1)
        return self.head(global_feat)


def make_cloud(label, n=24):
    base = rs.randn(n, 3)
    scale = np.array([[1.0, 1.0, 1.0], [2.0, 0.5, 0.5], [0.3, 0.3, 2.0]])[label]
    return (base * scale).astype("float32")


labels_np = rs.randint(0, 3, 12)
clouds = torch.from_numpy(np.stack([make_cloud(int(c)) for c in labels_np]))
labels = torch.from_numpy(labels_np).long()
d = torch.cdist(clouds[:2], clouds[:2])
print("cdist %.5f sym %s diag %.5f" % (d.sum().item(), torch.allclose(d, d.transpose(1, 2)),
                                      d.diagonal(dim1=1, dim2=2).abs().max().item()))
idx = knn(clouds[:1], 4)
print("knn self first", bool((idx[0, :, 0] == torch.arange(24)).all()), idx[0, :3].tolist())
net = PointNetSet()
det_init(net, 6, 0.3)
nn.init.ones_(net.edge.mlp[1].weight)
opt = torch.optim.Adam(net.parameters(), lr=5e-3, amsgrad=True)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
for epoch in range(5):
    net.train()
    for start in (0, 6):
        # the dropout in the head is the only random op: turn it off for parity
        net.head[2].p = 0.0
        logits = net(clouds[start:start + 6])
        loss = F.cross_entropy(logits, labels[start:start + 6])
        opt.zero_grad()
        loss.backward()
        opt.step()
    sched.step()
    net.eval()
    with torch.no_grad():
        acc = (net(clouds).argmax(1) == labels).float().mean().item()
    print("pointnet %d %.6f %.4f %.6f" % (epoch, loss.item(), acc, opt.param_groups[0]["lr"]))
print("bn running", "%.6f" % net.shared[1].running_var.mean().item())
