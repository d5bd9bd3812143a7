"""A BiLSTM-CRF tagger as in the classic PyTorch tutorial's structure, batched: embeddings,
a bidirectional LSTM over packed padded sequences (pack_padded_sequence with
enforce_sorted=False, pad_packed_sequence), a CRF layer with a learned transition matrix,
the forward algorithm by logsumexp over broadcast scores, the gold path score by gather,
masking by lengths, Viterbi decoding with max/argmax backpointers; trained with SGD,
momentum and weight decay under StepLR and ReduceLROnPlateau."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from common_init import det_init

START, STOP = 5, 6
NUM_TAGS = 7

class BiLSTMCRF(nn.Module):
    def __init__(self, vocab, emb=8, hidden=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, num_layers=1, bidirectional=True, batch_first=True)
        self.hidden2tag = nn.Linear(2 * hidden, NUM_TAGS)
        self.transitions = nn.Parameter(torch.randn(NUM_TAGS, NUM_TAGS))
    def constrain(self):
        with torch.no_grad():
            self.transitions.data[START, :] = -10000
            self.transitions.data[:, STOP] = -10000
    def features(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True,
                                      enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
        return self.hidden2tag(out)                                # (B, T, K)
    def log_partition(self, feats, mask):
        B, T, K = feats.shape
        alpha = torch.full((B, K), -10000.0)
        alpha[:, START] = 0.0
        for t in range(T):
            scores = alpha.unsqueeze(1) + self.transitions.unsqueeze(0) + feats[:, t].unsqueeze(2)
            new_alpha = torch.logsumexp(scores, dim=2)
            alpha = torch.where(mask[:, t].unsqueeze(1), new_alpha, alpha)
        return torch.logsumexp(alpha + self.transitions[STOP].unsqueeze(0), dim=1)
    def gold_score(self, feats, tags, mask):
        B, T, K = feats.shape
        emit = feats.gather(2, tags.unsqueeze(2)).squeeze(2)        # (B, T)
        prev = torch.cat([torch.full((B, 1), START, dtype=torch.long), tags[:, :-1]], dim=1)
        trans = self.transitions[tags, prev]                       # (B, T)
        score = ((emit + trans) * mask.float()).sum(1)
        last = tags.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        return score + self.transitions[STOP, last]
    def loss(self, tokens, lengths, tags):
        mask = torch.arange(tokens.shape[1])[None, :] < lengths[:, None]
        feats = self.features(tokens, lengths)
        return (self.log_partition(feats, mask) - self.gold_score(feats, tags, mask)).mean()
    @torch.no_grad()
    def viterbi(self, tokens, lengths):
        mask = torch.arange(tokens.shape[1])[None, :] < lengths[:, None]
        feats = self.features(tokens, lengths)
        B, T, K = feats.shape
        score = torch.full((B, K), -10000.0)
        score[:, START] = 0
        pointers = []
        for t in range(T):
            total = score.unsqueeze(1) + self.transitions.unsqueeze(0)   # (B, next, prev)
            best, idx = total.max(dim=2)
            pointers.append(idx)
            score = torch.where(mask[:, t].unsqueeze(1), best + feats[:, t], score)
        final = score + self.transitions[STOP]
        best_score, best_last = final.max(1)
        paths = []
        for b in range(B):
            tag = best_last[b].item()
            path = [tag]
            for t in range(int(lengths[b]) - 1, 0, -1):
                tag = pointers[t][b, tag].item()
                path.append(tag)
            paths.append(path[::-1])
        return best_score, paths

rs = np.random.RandomState(0)
seqs = [torch.from_numpy(rs.randint(1, 20, n)) for n in (5, 3, 6, 2, 4, 6)]
tags = [torch.from_numpy(rs.randint(0, 5, len(s))) for s in seqs]
tokens = pad_sequence(seqs, batch_first=True)
tag_pad = pad_sequence(tags, batch_first=True)
lengths = torch.tensor([len(s) for s in seqs])
model = BiLSTMCRF(20); det_init(model, 0, 0.3); model.constrain()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
step_lr = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0)
for epoch in range(6):
    opt.zero_grad()
    loss = model.loss(tokens, lengths, tag_pad)
    loss.backward()
    nn.utils.clip_grad_value_(model.parameters(), 5.0)
    opt.step(); step_lr.step(); plateau.step(loss.item())
    print("epoch", epoch, "%.6f %.6f" % (loss.item(), opt.param_groups[0]["lr"]))
best, paths = model.viterbi(tokens, lengths)
print("viterbi", ["%.4f" % v for v in best.tolist()], paths)
print("accuracy %.4f" % (sum(int((torch.tensor(p) == t).sum()) for p, t in zip(paths, tags)) /
                         sum(len(t) for t in tags)))
