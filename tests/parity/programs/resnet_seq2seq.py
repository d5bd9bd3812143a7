"""A small ResNet with BatchNorm, SGD (nesterov, weight decay), OneCycleLR, gradient
accumulation and bfloat16 autocast on the CPU; then a seq2seq GRU with attention."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

rs = np.random.RandomState(0)

class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.short(x))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layers = nn.Sequential(Block(8, 8, 1), Block(8, 16, 2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 5)
    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))

net = Net(); det_init(net, 3, 0.2)
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=8)
x = torch.from_numpy(rs.randn(8, 3, 8, 8).astype("float32"))
y = torch.from_numpy(rs.randint(0, 5, size=(8,)))
for step in range(8):
    for micro in range(2):
        out = net(x[micro * 4:(micro + 1) * 4])
        loss = F.cross_entropy(out, y[micro * 4:(micro + 1) * 4]) / 2
        loss.backward()
    opt.step(); opt.zero_grad(set_to_none=True); sched.step()
    print("resnet", step, "%.5f" % loss.item(), "%.6f" % sched.get_last_lr()[0])
net.eval()
with torch.no_grad():
    print("eval %.4f" % net(x).softmax(-1).max(-1).values.sum().item())
    print("running_mean %.5f" % net.stem[1].running_mean.sum().item())
with torch.autocast("cpu", dtype=torch.bfloat16):
    out = net(x)
    print("autocast", str(out.dtype).split(".")[1])

class EncoderRNN(nn.Module):
    def __init__(self, n, h):
        super().__init__()
        self.embedding = nn.Embedding(n, h)
        self.gru = nn.GRU(h, h, batch_first=True)
    def forward(self, x):
        return self.gru(self.embedding(x))

class BahdanauAttention(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.Wa = nn.Linear(h, h); self.Ua = nn.Linear(h, h); self.Va = nn.Linear(h, 1)
    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights

class AttnDecoderRNN(nn.Module):
    def __init__(self, h, n):
        super().__init__()
        self.embedding = nn.Embedding(n, h)
        self.attention = BahdanauAttention(h)
        self.gru = nn.GRU(2 * h, h, batch_first=True)
        self.out = nn.Linear(h, n)
    def forward(self, enc_out, enc_hidden, target):
        dec_in = torch.zeros(enc_out.size(0), 1, dtype=torch.long)
        hidden, outs = enc_hidden, []
        for i in range(target.size(1)):
            emb = self.embedding(dec_in)
            query = hidden.permute(1, 0, 2)
            ctx, attn = self.attention(query, enc_out)
            out, hidden = self.gru(torch.cat((emb, ctx), dim=2), hidden)
            outs.append(self.out(out))
            dec_in = target[:, i].unsqueeze(1)
        return F.log_softmax(torch.cat(outs, dim=1), dim=-1)

enc, dec = EncoderRNN(12, 10), AttnDecoderRNN(10, 12)
det_init(enc, 4); det_init(dec, 5)
src = torch.from_numpy(rs.randint(0, 12, size=(3, 6)))
tgt = torch.from_numpy(rs.randint(0, 12, size=(3, 5)))
params = list(enc.parameters()) + list(dec.parameters())
opt = torch.optim.Adam(params, lr=0.01)
for step in range(4):
    opt.zero_grad()
    eo, eh = enc(src)
    out = dec(eo, eh, tgt)
    loss = F.nll_loss(out.view(-1, out.size(-1)), tgt.view(-1))
    loss.backward()
    print("seq2seq", step, "%.6f" % loss.item())
    opt.step()
