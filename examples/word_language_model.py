"""Word-level language model (LSTM/GRU/RNN or Transformer) on a tiny bundled corpus.

A PyTorch program in the style of PyTorch's own examples, run on ember by its import line
alone. Trains by truncated backpropagation through time with plain SGD updates and
gradient clipping, anneals the learning rate when validation loss stops improving, and
reports the test perplexity.

    python examples/word_language_model.py --model LSTM --epochs 3
    python examples/word_language_model.py --model Transformer --epochs 3
"""
import argparse
import math
import os
import time

import ember as torch
import ember.nn as nn
import ember.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- data -------------------------------------------------------------------------------
class Dictionary:
    """Word <-> index, in order of first appearance."""

    def __init__(self):
        self.word2idx, self.idx2word = {}, []

    def add_word(self, word):
        if word not in self.word2idx:
            self.word2idx[word] = len(self.idx2word)
            self.idx2word.append(word)
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    """train/valid/test.txt of a folder as 1-D LongTensors of word ids (``<eos>`` ends
    each line)."""

    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train, self.valid, self.test = (self.tokenize(os.path.join(path, name + ".txt"))
                                             for name in ("train", "valid", "test"))

    def tokenize(self, path):
        ids = []
        with open(path, encoding="utf8") as f:
            for line in f:
                ids.extend(self.dictionary.add_word(w) for w in line.split() + ["<eos>"])
        return torch.tensor(ids, dtype=torch.int64)


def batchify(data, bsz):
    """Cut the stream into ``bsz`` columns (dropping the remainder): shape (steps, bsz)."""
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    """Inputs rows i..i+bptt and the next-word targets, flattened."""
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


# ---- models -----------------------------------------------------------------------------
class RNNModel(nn.Module):
    """Embedding -> recurrent layers -> linear decoder over the vocabulary."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ("LSTM", "GRU"):
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        zeros = weight.new_zeros(self.nlayers, bsz, self.nhid)
        return (zeros, zeros.clone()) if self.rnn_type == "LSTM" else zeros


class PositionalEncoding(nn.Module):
    """Adds fixed sine/cosine position signals to the embeddings (a buffer, not learnt)."""

    def __init__(self, d_model, dropout=0.1, max_len=500):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Module):
    """Embedding + positions -> causal Transformer encoder -> linear decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.model_type, self.ninp = "Transformer", ninp
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers,
                                                         enable_nested_tensor=False)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        src = self.pos_encoder(self.encoder(src) * math.sqrt(self.ninp))
        output = self.transformer_encoder(src, mask.to(src.dtype), is_causal=True)
        return F.log_softmax(self.decoder(output), dim=-1)


def build_model(args, ntokens):
    if args.model == "Transformer":
        model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers,
                                 args.dropout)
    else:
        model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers,
                         args.dropout, args.tied)
    return model.double() if args.double else model


# ---- training ---------------------------------------------------------------------------
def repackage_hidden(h):
    """Cut the graph at the batch boundary (truncated BPTT)."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train_epoch(model, train_data, args, lr, max_batches=None):
    """One pass of truncated BPTT with SGD steps ``p -= lr * grad``; the batch losses."""
    model.train()
    criterion, losses = nn.NLLLoss(), []
    hidden = None if args.model == "Transformer" else model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        if max_batches is not None and batch >= max_batches:
            break
        data, targets = get_batch(train_data, i, args.bptt)
        model.zero_grad()
        if hidden is None:
            output = model(data).view(-1, model.decoder.out_features)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        losses.append(loss.item())
    return losses


def evaluate(model, data_source, args):
    model.eval()
    criterion, total = nn.NLLLoss(), 0.0
    hidden = None if args.model == "Transformer" else model.init_hidden(data_source.size(1))
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i, args.bptt)
            if hidden is None:
                output = model(data).view(-1, model.decoder.out_features)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total += len(data) * criterion(output, targets).item()
    return total / (len(data_source) - 1)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Word-level language model on a tiny corpus")
    p.add_argument("--data", default=os.path.join(HERE, "data", "tiny_corpus"))
    p.add_argument("--model", default="LSTM",
                   choices=["RNN_TANH", "RNN_RELU", "LSTM", "GRU", "Transformer"])
    p.add_argument("--emsize", type=int, default=32)
    p.add_argument("--nhid", type=int, default=32)
    p.add_argument("--nlayers", type=int, default=2)
    p.add_argument("--nhead", type=int, default=2)
    p.add_argument("--lr", type=float, default=5.0)
    p.add_argument("--clip", type=float, default=0.25)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--bptt", type=int, default=12)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--tied", action="store_true")
    p.add_argument("--double", action="store_true", help="train in float64")
    p.add_argument("--seed", type=int, default=1111)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    corpus = Corpus(args.data)
    train_data = batchify(corpus.train, args.batch_size)
    val_data, test_data = batchify(corpus.valid, 2), batchify(corpus.test, 2)
    model = build_model(args, len(corpus.dictionary))
    lr, best_val = args.lr, None
    for epoch in range(1, args.epochs + 1):
        start = time.time()
        losses = train_epoch(model, train_data, args, lr)
        val_loss = evaluate(model, val_data, args)
        print(f"| epoch {epoch:3d} | time {time.time() - start:5.2f}s | lr {lr:5.2f} | "
              f"train loss {sum(losses) / len(losses):5.2f} | valid loss {val_loss:5.2f} | "
              f"valid ppl {math.exp(val_loss):8.2f}")
        if best_val is None or val_loss < best_val:
            best_val = val_loss
        else:
            lr /= 4.0  # anneal when validation stops improving
    test_loss = evaluate(model, test_data, args)
    print(f"| end of training | test loss {test_loss:5.2f} | test ppl {math.exp(test_loss):8.2f}")
    return test_loss


if __name__ == "__main__":
    main()
