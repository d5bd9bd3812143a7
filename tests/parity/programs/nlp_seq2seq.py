"""Classic NLP in PyTorch: a whitespace/punctuation tokenizer and a Counter-built vocabulary
in plain Python, an nn.EmbeddingBag(mode='mean') text classifier fed flat token ids with
offsets (the torchtext tutorial's collate_batch) and trained by SGD under StepLR, then an
LSTM encoder-decoder with Bahdanau (additive) attention: pad_sequence batches, an
nn.Embedding with padding_idx, a bidirectional encoder whose final states are bridged with
torch.cat + tanh, an LSTMCell decoder trained with teacher forcing drawn from NumPy,
attention scores masked by source lengths (masked_fill with -inf, softmax, bmm),
CrossEntropyLoss(ignore_index, label_smoothing), and beam search decoding (log_softmax,
topk over flattened beams, floor division for the beam index, index_select to reorder the
states, gather to follow back-pointers), plus greedy decoding with argmax for comparison;
then from_pretrained embeddings, a proj_size LSTM over pack_sequence / unpack_sequence, a
pointer-generator step (scatter_add of attention onto the vocabulary), Categorical entropy,
clip_grad_value_, and a vocabulary checkpoint holding a Counter and a set."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import os
import re
import tempfile
from collections import Counter
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from common_init import det_init

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"


def tokenize(text):
    return re.findall(r"[a-z]+|[0-9]+|[^\sa-z0-9]", text.lower())


class Vocab:
    def __init__(self, counter, min_freq=1, specials=(PAD, BOS, EOS, UNK)):
        self.itos = list(specials) + sorted(w for w, c in counter.items()
                                            if c >= min_freq and w not in specials)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def encode(self, tokens):
        return [self.stoi.get(t, self.stoi[UNK]) for t in tokens]


rs = np.random.RandomState(0)
WORDS = ["good", "great", "fine", "bad", "awful", "poor", "movie", "plot", "actor", "the",
         "was", "very", "not", "really", "film", "!", ",", "and"]
POS, NEG = {"good", "great", "fine"}, {"bad", "awful", "poor"}


def make_sentence():
    n = rs.randint(3, 9)
    words = list(rs.choice(WORDS, size=n))
    label = int(sum(w in POS for w in words) >= sum(w in NEG for w in words))
    return " ".join(words).capitalize() + ".", label


corpus = [make_sentence() for _ in range(64)]
vocab = Vocab(Counter(t for s, _ in corpus for t in tokenize(s)), min_freq=2)
print("vocab", len(vocab), vocab.itos[:8])


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for text, label in batch:
        ids = torch.tensor(vocab.encode(tokenize(text)), dtype=torch.int64)
        label_list.append(label)
        text_list.append(ids)
        offsets.append(ids.size(0))
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    return torch.tensor(label_list, dtype=torch.int64), torch.cat(text_list), offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.fc = nn.Linear(embed_dim, num_class)

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


clf = TextClassificationModel(len(vocab), 16, 2)
det_init(clf, 0, 0.3)
optimizer = torch.optim.SGD(clf.parameters(), lr=2.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
criterion = torch.nn.CrossEntropyLoss()
for epoch in range(3):
    clf.train()
    total_acc, total_count = 0, 0
    for start in range(0, 48, 16):
        label, text, offsets = collate_batch(corpus[start:start + 16])
        optimizer.zero_grad()
        predicted = clf(text, offsets)
        loss = criterion(predicted, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(clf.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted.argmax(1) == label).sum().item()
        total_count += label.size(0)
    scheduler.step()
    clf.eval()
    with torch.no_grad():
        label, text, offsets = collate_batch(corpus[48:])
        val_acc = (clf(text, offsets).argmax(1) == label).float().mean()
    print("epoch", epoch, "loss %.5f train acc %.4f val acc %.4f" % (
        loss.item(), total_acc / total_count, val_acc.item()))

# ---- seq2seq: reverse a digit sequence and map digits to words ----
DIGITS = "zero one two three four five six seven eight nine".split()
src_vocab = Vocab(Counter(str(d) for d in range(10)))
tgt_vocab = Vocab(Counter(DIGITS))
PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2


def make_pairs(n):
    pairs = []
    for _ in range(n):
        digits = [str(d) for d in rs.randint(0, 10, size=rs.randint(2, 6))]
        src = torch.tensor(src_vocab.encode(digits) + [EOS_IDX])
        tgt = torch.tensor([BOS_IDX] + tgt_vocab.encode([DIGITS[int(d)] for d in digits[::-1]])
                           + [EOS_IDX])
        pairs.append((src, tgt))
    return pairs


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb, padding_idx=PAD_IDX)
        self.rnn = nn.LSTM(emb, hid, batch_first=True, bidirectional=True)
        self.bridge_h = nn.Linear(2 * hid, hid)
        self.bridge_c = nn.Linear(2 * hid, hid)

    def forward(self, src):
        outputs, (h, c) = self.rnn(self.embedding(src))
        h = torch.tanh(self.bridge_h(torch.cat((h[-2], h[-1]), dim=1)))
        c = torch.tanh(self.bridge_c(torch.cat((c[-2], c[-1]), dim=1)))
        return outputs, (h, c)


class BahdanauAttention(nn.Module):
    def __init__(self, enc_dim, dec_dim, attn_dim):
        super().__init__()
        self.W_enc = nn.Linear(enc_dim, attn_dim, bias=False)
        self.W_dec = nn.Linear(dec_dim, attn_dim)
        self.v = nn.Linear(attn_dim, 1, bias=False)

    def forward(self, dec_h, enc_out, enc_proj, mask):
        energy = self.v(torch.tanh(enc_proj + self.W_dec(dec_h).unsqueeze(1))).squeeze(2)
        energy = energy.masked_fill(~mask, float("-inf"))
        weights = F.softmax(energy, dim=1)
        context = torch.bmm(weights.unsqueeze(1), enc_out).squeeze(1)
        return context, weights


class Decoder(nn.Module):
    def __init__(self, vocab_size, emb, hid, enc_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb, padding_idx=PAD_IDX)
        self.attention = BahdanauAttention(enc_dim, hid, hid)
        self.cell = nn.LSTMCell(emb + enc_dim, hid)
        self.out = nn.Linear(hid + enc_dim + emb, vocab_size)

    def forward(self, token, state, enc_out, enc_proj, mask):
        emb = self.embedding(token)
        context, weights = self.attention(state[0], enc_out, enc_proj, mask)
        h, c = self.cell(torch.cat([emb, context], dim=1), state)
        return self.out(torch.cat([h, context, emb], dim=1)), (h, c), weights


class Seq2Seq(nn.Module):
    def __init__(self, emb=12, hid=20):
        super().__init__()
        self.encoder = Encoder(len(src_vocab), emb, hid)
        self.decoder = Decoder(len(tgt_vocab), emb, hid, 2 * hid)

    def encode(self, src, src_lens):
        enc_out, state = self.encoder(src)
        mask = torch.arange(src.size(1)).unsqueeze(0) < src_lens.unsqueeze(1)
        return enc_out, self.decoder.attention.W_enc(enc_out), mask, state

    def forward(self, src, src_lens, tgt, teacher_forcing):
        enc_out, enc_proj, mask, state = self.encode(src, src_lens)
        token, logits = tgt[:, 0], []
        for t in range(1, tgt.size(1)):
            step_logits, state, _ = self.decoder(token, state, enc_out, enc_proj, mask)
            logits.append(step_logits)
            token = tgt[:, t] if teacher_forcing[t - 1] else step_logits.argmax(1)
        return torch.stack(logits, dim=1)


def batchify(pairs):
    srcs, tgts = zip(*pairs)
    src = pad_sequence(srcs, batch_first=True, padding_value=PAD_IDX)
    tgt = pad_sequence(tgts, batch_first=True, padding_value=PAD_IDX)
    return src, torch.tensor([len(s) for s in srcs]), tgt


model = Seq2Seq()
det_init(model, 1, 0.2)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss(ignore_index=PAD_IDX, label_smoothing=0.1)
train_pairs = make_pairs(96)
for step in range(12):
    src, src_lens, tgt = batchify(train_pairs[(step % 6) * 16:(step % 6 + 1) * 16])
    forcing = rs.rand(tgt.size(1)) < 0.75
    logits = model(src, src_lens, tgt, forcing)
    loss = loss_fn(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 3 == 2:
        print("seq2seq step", step, "loss %.5f" % loss.item())


@torch.no_grad()
def beam_search(model, src, beam=3, max_len=8):
    src_lens = torch.tensor([src.size(0)])
    enc_out, enc_proj, mask, (h, c) = model.encode(src.unsqueeze(0), src_lens)
    enc_out, enc_proj = enc_out.expand(beam, -1, -1), enc_proj.expand(beam, -1, -1)
    mask, h, c = mask.expand(beam, -1), h.repeat(beam, 1), c.repeat(beam, 1)
    scores = torch.full((beam,), float("-inf"))
    scores[0] = 0.0
    tokens = torch.full((beam, 1), BOS_IDX, dtype=torch.long)
    finished = torch.zeros(beam, dtype=torch.bool)
    backptrs = []
    for _ in range(max_len):
        logits, (h, c), _ = model.decoder(tokens[:, -1], (h, c), enc_out, enc_proj, mask)
        logp = F.log_softmax(logits, dim=-1)
        logp = logp.masked_fill(finished.unsqueeze(1), float("-inf"))
        logp[:, PAD_IDX] = torch.where(finished, torch.zeros(beam), torch.full((beam,), -1e9))
        total = (scores.unsqueeze(1) + logp).view(-1)
        top_scores, top_idx = total.topk(beam, largest=True, sorted=True)
        beam_idx = torch.div(top_idx, logp.size(1), rounding_mode="floor")
        word_idx = top_idx % logp.size(1)
        h, c = h.index_select(0, beam_idx), c.index_select(0, beam_idx)
        tokens = torch.cat([tokens.index_select(0, beam_idx), word_idx.unsqueeze(1)], dim=1)
        finished = finished.index_select(0, beam_idx) | (word_idx == EOS_IDX)
        backptrs.append(beam_idx)
        scores = top_scores
        if bool(finished.all()):
            break
    lengths = (tokens != PAD_IDX).sum(1).float()
    normalized = scores / lengths
    best = normalized.argmax().item()
    chain = torch.arange(beam)
    for bp in reversed(backptrs):
        chain = bp.gather(0, chain)
    return tokens[best].tolist(), normalized, chain.tolist()


counter = Counter(t for s, _ in corpus for t in tokenize(s))
vocab_path = os.path.join(tempfile.mkdtemp(), "vocab.pt")
torch.save({"counter": counter, "itos": vocab.itos, "specials": {PAD, BOS, EOS, UNK},
            "classifier": clf.state_dict()}, vocab_path)
saved = torch.load(vocab_path, weights_only=False)
print("saved vocab", type(saved["counter"]).__name__, saved["counter"].most_common(3),
      len(saved["itos"]), sorted(saved["specials"]), sorted(saved["classifier"]))

model.eval()
for src, tgt in make_pairs(3):
    hyp, norm_scores, origin = beam_search(model, src)
    words = [tgt_vocab.itos[i] for i in hyp if i not in (PAD_IDX, BOS_IDX, EOS_IDX)]
    ref = [tgt_vocab.itos[i] for i in tgt.tolist()[1:-1]]
    print("beam", " ".join("%.6f" % s for s in norm_scores.tolist()), "origin", origin,
          "len", len(words), "match", words == ref)
    with torch.no_grad():
        greedy = model(src.unsqueeze(0), torch.tensor([src.size(0)]),
                       torch.full((1, 7), BOS_IDX), np.zeros(7, dtype=bool))
    print("greedy", greedy.argmax(-1).tolist(), "%.5f" % greedy.logsumexp(-1).sum().item())

# ---- pretrained embeddings, a projected LSTM, a pointer-generator step, sampling stats ----
pretrained = torch.from_numpy(rs.randn(len(vocab), 8).astype(np.float32))
frozen = nn.Embedding.from_pretrained(pretrained, freeze=True, padding_idx=0)
bag = nn.EmbeddingBag.from_pretrained(pretrained, mode="max")
label, text, offsets = collate_batch(corpus[:4])
print("frozen", frozen.weight.requires_grad, "bag max %.5f" % bag(text, offsets).sum().item(),
      "sum %.5f" % F.embedding_bag(text, pretrained, offsets, mode="sum").sum().item())

seqs = [torch.tensor(vocab.encode(tokenize(s))) for s, _ in corpus[:5]]
lstm = nn.LSTM(8, 10, num_layers=2, proj_size=4, batch_first=True)
det_init(lstm, 7, 0.3)
packed = nn.utils.rnn.pack_sequence([frozen(s) for s in seqs], enforce_sorted=False)
out, (h_n, c_n) = lstm(packed)
unpacked = nn.utils.rnn.unpack_sequence(out)
print("proj lstm", tuple(h_n.shape), tuple(c_n.shape), [tuple(u.shape) for u in unpacked],
      "%.5f" % sum(u.sum().item() for u in unpacked))

# copy mechanism: mix a vocabulary distribution with attention scattered onto source ids
src, src_lens, tgt = batchify(train_pairs[:4])
with torch.no_grad():
    enc_out, enc_proj, mask, state = model.encode(src, src_lens)
    logits, state, attn = model.decoder(tgt[:, 0], state, enc_out, enc_proj, mask)
p_gen = torch.sigmoid(logits.mean(dim=1, keepdim=True))
vocab_dist = p_gen * F.softmax(logits, dim=-1)
extended = torch.zeros(src.size(0), len(tgt_vocab) + 10).narrow(1, 0, len(tgt_vocab))
extended = extended + vocab_dist
copy_ids = src.clamp(max=len(tgt_vocab) - 1)
final = extended.scatter_add(1, copy_ids, (1 - p_gen) * attn)
print("pointer mass", " ".join("%.5f" % v for v in final.sum(1).tolist()),
      "attn rows %.5f" % attn.sum().item())
dist = torch.distributions.Categorical(probs=final)
print("entropy %.5f" % dist.entropy().mean().item(),
      "log_prob %.5f" % dist.log_prob(tgt[:, 1]).sum().item(),
      "nll %.5f" % F.nll_loss(final.log(), tgt[:, 1], reduction="sum").item())
nn.utils.clip_grad_value_(model.parameters(), 0.01)
print("grad max after clip %.5f" % max(p.grad.abs().max().item() for p in model.parameters()
                                       if p.grad is not None))
