"""A char-level language model in the style of PyTorch's word_language_model example:
embedding, 2-layer LSTM (and a GRU variant), tied decoder weights, truncated BPTT with
detached hidden state, gradient clipping, SGD with ReduceLROnPlateau, then Adam with a
CosineAnnealingLR schedule; greedy generation at the end."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

text = "the quick brown fox jumps over the lazy dog. " * 6
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)

def batchify(d, bsz):
    nbatch = d.size(0) // bsz
    return d.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()

class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, tie):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=0.0)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie:
            self.decoder.weight = self.encoder.weight
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return F.log_softmax(self.decoder(output), dim=-1), hidden
    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)

def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)

train = batchify(data, 4)
bptt, ntokens = 12, len(chars)
def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)

def run(rnn_type, tie, opt_name):
    model = RNNModel(rnn_type, ntokens, 16, 16 if tie else 20, 2, tie)
    det_init(model, 3, 0.2)
    if opt_name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=2.0)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=1e-4)
    criterion = nn.NLLLoss()
    for epoch in range(4):
        model.train()
        hidden = model.init_hidden(4)
        total, norms = 0.0, 0.0
        for i in range(0, train.size(0) - 1, bptt):
            x, y = get_batch(train, i)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(x, hidden)
            loss = criterion(output.view(-1, ntokens), y)
            loss.backward()
            norms += float(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25))
            if opt_name == "sgd":
                torch.nn.utils.clip_grad_value_(model.parameters(), 0.1)
            opt.step()
            total += loss.item() * len(x)
        val = total / (train.size(0) - 1)
        if opt_name == "sgd":
            sched.step(val if epoch != 2 else val + 1.0)
        else:
            sched.step()
        print(rnn_type, opt_name, epoch, "%.5f %.4f %.5f %.6f" % (
            val, math.exp(val), norms, opt.param_groups[0]["lr"]))
    model.eval()
    with torch.no_grad():
        hidden = model.init_hidden(1)
        inp = torch.tensor([[stoi["t"]]])
        out = []
        for _ in range(20):
            logp, hidden = model(inp, hidden)
            idx = logp[-1, 0].argmax().item()
            out.append(idx)
            inp = torch.tensor([[idx]])
    print("gen", out)

run("LSTM", True, "sgd")
run("GRU", False, "adam")
# an RNNCell/LSTMCell loop and a weighted, ignore_index cross-entropy
cell = nn.LSTMCell(5, 7); det_init(cell, 4)
rs = np.random.RandomState(0)
xs = torch.from_numpy(rs.randn(6, 3, 5).astype("float32"))
h, c = torch.zeros(3, 7), torch.zeros(3, 7)
for t in range(6):
    h, c = cell(xs[t], (h, c))
w = torch.from_numpy(rs.rand(7).astype("float32"))
tgt = torch.tensor([1, 6, -100])
loss = F.cross_entropy(h, tgt, weight=w, ignore_index=-100)
loss.backward()
print("cell %.6f %.6f" % (loss.item(), cell.weight_hh.grad.norm().item()))
